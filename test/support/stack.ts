// A real svc stack for one test: API + (optionally) worker against the suite's Temporal server,
// on its own task queue, data directory and database (SQLite file or a scratch PostgreSQL DB).
import { detachMountsUnder } from '../../activities/environment-cache.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { RUN_EVENTS_PAGE } from '../../core/event-kinds.ts';
import { createScratchPostgresDatabase } from '../../db/scratch-postgres.ts';
import { loadConfig, type SvcConfig } from '../../platform/config.ts';
import { startStack, type RunningStack } from '../../stack/stack.ts';
import { loadTemporalDevSettings, startTemporalDev } from '../../stack/temporal-dev.ts';
import { freePort } from './free-port.ts';
import { suitePostgresUrl, suiteTemporalAddress, type DatabaseLeg } from './env.ts';

export interface TestStack {
  stack: RunningStack;
  config: SvcConfig;
  url: string;
  token: string;
  request(
    method: string,
    path: string,
    options?: { body?: unknown; token?: string | null; headers?: Record<string, string>; rawBody?: string },
  ): Promise<TestResponse>;
  stop(): Promise<void>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface TestStackOptions {
  database?: DatabaseLeg;
  worker?: boolean;
  temporalAddress?: string;
  env?: Record<string, string>;
  dataDir?: string;
  /** `svc serve --no-auth`: every caller is the operator. */
  noAuth?: boolean;
  /** Receives what start-up prints. */
  log?: (line: string) => void;
}

export async function testEnvironment(options: TestStackOptions) {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'svc-test-'));
  let dropDatabase = async () => {};
  let databaseUrl = join(dataDir, 'svc.sqlite');
  if (options.database === 'postgresql') {
    const base = suitePostgresUrl();
    if (!base) throw new Error('no PostgreSQL for this test');
    const scratch = await createScratchPostgresDatabase(base);
    databaseUrl = scratch.url;
    dropDatabase = scratch.drop;
  }
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SVC_DATA_DIR: dataDir,
    SVC_PORT: '0',
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: options.temporalAddress ?? suiteTemporalAddress(),
    SVC_TASK_QUEUE: `test-${randomBytes(6).toString('hex')}`,
    SVC_API_TOKEN: '',
    ...options.env,
  };
  return { dataDir, databaseUrl, env, dropDatabase };
}

export async function startTestStack(options: TestStackOptions = {}): Promise<TestStack> {
  const environment = await testEnvironment(options);
  const config = loadConfig(environment.env);
  const stack = await startStack({
    config,
    api: true,
    worker: options.worker ?? true,
    noAuth: options.noAuth ?? false,
    log: options.log ?? (() => {}),
  });
  const url = stack.api!.url;
  const token = stack.token.token;
  return {
    stack,
    config,
    url,
    token,
    request: (method, path, requestOptions = {}) => request(url, token, method, path, requestOptions),
    async stop() {
      await stack.stop();
      await environment.dropDatabase();
      // A run's workspace and home over a kept environment are mounts: they go first.
      await detachMountsUnder(environment.dataDir);
      if (!options.dataDir) rmSync(environment.dataDir, { recursive: true, force: true });
    },
  };
}

export async function request(
  baseUrl: string,
  defaultToken: string,
  method: string,
  path: string,
  options: { body?: unknown; token?: string | null; headers?: Record<string, string>; rawBody?: string } = {},
): Promise<TestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  const token = options.token === undefined ? defaultToken : options.token;
  if (token) headers.authorization = `Bearer ${token}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/** Polls GET /runs/{id} until the run is terminal (or the deadline passes). */
export async function waitForRunState(
  stack: Pick<TestStack, 'request'>,
  runId: string,
  states: string[] = ['succeeded', 'failed', 'cancelled'],
  timeoutMs = 60_000,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: any;
  while (Date.now() < deadline) {
    const response = await stack.request('GET', `/runs/${runId}`);
    last = response.body?.run;
    if (last && states.includes(last.state)) return last;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  // What the run last did, to say where it stuck (the supervisor and finalizer leave events).
  const log = await lastRunEvents(stack, runId);
  throw new Error(
    `run ${runId} did not reach ${states.join('/')} in ${timeoutMs} ms; last state ${last?.state}; ` +
      `its last events:\n${log}`,
  );
}

/** A whole stack with its own Temporal dev server, for tools and tests that must not share one. */
export async function startIsolatedStack(options: { worker?: boolean; env?: Record<string, string> } = {}) {
  const settings = loadTemporalDevSettings();
  settings.port = await freePort();
  settings.ui.enabled = false;
  const temporalDir = mkdtempSync(join(tmpdir(), 'svc-temporal-'));
  const temporal = await startTemporalDev(temporalDir, settings);
  const environment = await testEnvironment({ temporalAddress: temporal.address, env: options.env ?? {} });
  const stack = await startStack({
    config: loadConfig(environment.env),
    api: true,
    worker: options.worker ?? true,
    noAuth: false,
    log: () => {},
  });
  return {
    temporal,
    temporalDir,
    temporalSettings: settings,
    environment,
    stack,
    api: {
      request: (method: string, path: string, requestOptions?: Parameters<TestStack['request']>[2]) =>
        request(stack.api!.url, stack.token.token, method, path, requestOptions),
    },
    async stop() {
      await stack.stop();
      await temporal.stop();
    },
  };
}

/** What the run-event readers below need of a stack: its request, or a test's own that passes a token. */
interface EventReader {
  request(method: string, path: string, options?: { token?: string | null }): Promise<{ text: string }>;
}

/**
 * A run's events so far as the NDJSON lines the API answers: GET /runs/{id}/events?follow=0 page
 * after page, each since the last seq read, until a page comes back empty. `token`: null reads as
 * a spectator.
 */
export async function runEventLines(
  stack: EventReader,
  runId: string,
  options: { token?: string | null } = {},
): Promise<string[]> {
  const lines: string[] = [];
  for (;;) {
    const since = lines.length ? (JSON.parse(lines.at(-1)!) as { seq: number }).seq : 0;
    const page = (
      await stack.request('GET', `/runs/${runId}/events?follow=0&since=${since}&limit=${RUN_EVENTS_PAGE}`, options)
    ).text
      .split('\n')
      .filter(Boolean);
    lines.push(...page);
    if (page.length === 0) return lines;
  }
}

/** A run's events so far, parsed (runEventLines). */
export async function runEvents(
  stack: EventReader,
  runId: string,
  options: { token?: string | null } = {},
): Promise<{ seq: number; kind: string; stream: string | null; ts: string; payload: any }[]> {
  return (await runEventLines(stack, runId, options)).map((line) => JSON.parse(line));
}

/** A run's last `count` events, as NDJSON text lines cut at 300 characters: what a failing wait reports. */
export async function lastRunEvents(stack: EventReader, runId: string, count = 12): Promise<string> {
  return stack
    .request('GET', `/runs/${runId}/events?before=${Number.MAX_SAFE_INTEGER}&limit=${count}`)
    .then((events) =>
      events.text
        .trim()
        .split('\n')
        .map((line) => line.slice(0, 300))
        .join('\n'),
    )
    .catch((error: Error) => `(no events: ${error.message})`);
}

/** The lines a run's agent wrote on stdout so far. */
export async function runStdout(stack: EventReader, runId: string): Promise<string[]> {
  return (await runEvents(stack, runId))
    .filter((event) => event.stream === 'stdout')
    .map((event) => event.payload.text as string);
}
