// The production layout with more than one of everything: two API replicas (`svc serve --no-worker`)
// and two `svc worker`s on one PostgreSQL database, one Temporal and one data directory, with a load
// balancer in front of the APIs (the workers' sandboxes call back through it). What one replica
// hands out works on the other, and is spent once across both: a sign-in link, an idempotent
// dispatch, a GitHub App registration, a preview login. Then an API and a worker are SIGKILLed
// while runs are under way and more are being dispatched: every accepted run ends exactly once.
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { RunEntity } from '../../db/entities/index.ts';
import { initORM, type ReadModel } from '../../db/orm.ts';
import { svcCli } from '../support/cli.ts';
import { postgresOrSkip } from '../support/env.ts';
import { freePort } from '../support/free-port.ts';
import { GitHubAppStandIn } from '../support/github-app-standin.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { startLoadBalancer, type LoadBalancer } from '../support/load-balancer.ts';
import { spawnSvc, waitFor, waitForOutput, type ChildHandle } from '../support/processes.ts';
import { RegistrationBrowser, unescapeHtml } from '../support/registration-browser.ts';
import { request, testEnvironment, waitForRunState, type TestResponse, type TestStack } from '../support/stack.ts';
import { assertRanExactlyOnce, markerOf, TICKING_PROMPT, waitForTicks } from '../support/ticking-run.ts';
import { textPreviewServer } from '../support/preview-fixture.ts';

const TOKEN = `replicas-${randomBytes(12).toString('hex')}`;
const forge = new GitHubAppStandIn('ghp_test');

interface Replica extends Pick<TestStack, 'request'> {
  name: string;
  url: string;
  previewUrl: string;
  process: ChildHandle;
}

let topology:
  | {
      apis: [Replica, Replica];
      workers: ChildHandle[];
      balancer: LoadBalancer;
      readModel: ReadModel;
      temporal: Connection;
      taskQueue: string;
      stop(): Promise<void>;
    }
  | undefined;

test.before(async () => {
  if (!process.env.SVC_TEST_POSTGRES_URL) return;
  await forge.start();
  // The stand-in's git configuration reaches the processes through the environment they are handed.
  new GitHubStandIn().createRepo('acme', 'replica-preview', {
    files: {
      '.svc/preview.yaml': 'preview:\n  type: server\n  command: node server.mjs\n  port: 4100\n',
      'server.mjs': textPreviewServer('replicas'),
      'page.txt': 'before\n',
    },
  });
  const [apiPorts, previewPorts] = [
    [await freePort(), await freePort()],
    [await freePort(), await freePort()],
  ];
  const balancer = await startLoadBalancer(apiPorts.map((port) => ({ host: '127.0.0.1', port })));
  const environment = await testEnvironment({
    database: 'postgresql',
    env: {
      SVC_API_TOKEN: TOKEN,
      SVC_API_URL: balancer.url,
      // What users open: the balancer (the GitHub App's manifest names it).
      SVC_PUBLIC_URL: balancer.url,
      SVC_GIT_TOKEN: 'ghp_test',
      SVC_GITHUB_API_URL: forge.url,
      SVC_APP_CRED_STORE: 'data-dir',
      SVC_LOG_LEVEL: 'warn',
    },
  });
  const apis = apiPorts.map((port, index) => {
    const env = { ...environment.env, SVC_PORT: String(port), SVC_PREVIEW_PORT: String(previewPorts[index]) };
    const url = `http://127.0.0.1:${port}`;
    return {
      name: index === 0 ? 'A' : 'B',
      url,
      previewUrl: `http://127.0.0.1:${previewPorts[index]}`,
      process: spawnSvc(['serve', '--no-worker'], env),
      request: (method: string, path: string, options?: Parameters<TestStack['request']>[2]) =>
        request(url, TOKEN, method, path, options),
    };
  }) as [Replica, Replica];
  const workers = [0, 1].map(() => spawnSvc(['worker'], environment.env));
  const everything = [...apis.map((api) => api.process), ...workers];
  const readModel = await initORM({ databaseUrl: environment.databaseUrl });
  const temporal = await Connection.connect({ address: environment.env.TEMPORAL_ADDRESS! });
  topology = {
    apis,
    workers,
    balancer,
    readModel,
    temporal,
    taskQueue: environment.env.SVC_TASK_QUEUE!,
    async stop() {
      for (const child of everything) if (child.child.exitCode === null) child.child.kill('SIGTERM');
      await Promise.all(everything.map((child) => child.exited));
      await balancer.close();
      await readModel.close();
      await temporal.close();
      await environment.dropDatabase();
      rmSync(environment.dataDir, { recursive: true, force: true });
    },
  };
  await Promise.all(apis.map((api) => waitForOutput(api.process, /svc is up/, 120_000)));
  await Promise.all(workers.map((worker) => waitForOutput(worker, /worker: polling/, 120_000)));
});
test.after.always(async () => {
  await topology?.stop();
  await forge.stop();
});

/** The topology, or a skipped test when there is no PostgreSQL (replicas share one: SQLite is one process's). */
const replicas = (t: Parameters<typeof postgresOrSkip>[0]) => (postgresOrSkip(t, 'postgresql') ? topology! : null);

test.serial('both replicas run on one data directory, and the balancer reaches both', async (t) => {
  const world = replicas(t);
  if (!world) return;
  for (const api of world.apis) t.is((await api.request('GET', '/readyz')).status, 200, api.name);
  for (let i = 0; i < 4; i++) t.is((await request(world.balancer.url, TOKEN, 'GET', '/healthz')).status, 200);
  t.is(world.balancer.accepted.size, 2, 'round robin over both replicas');
});

test.serial('a sign-in link made on one replica opens on the other, once across both', async (t) => {
  const world = replicas(t);
  if (!world) return;
  const [a, b] = world.apis;
  const config = join(mkdtempSync(join(tmpdir(), 'svc-replicas-login-')), 'client.json');
  const login = await svcCli(['login', '--url', a.url], { SVC_API_TOKEN: TOKEN, SVC_CLIENT_CONFIG: config });
  t.is(login.code, 0, login.stderr);
  const link = new URL(/^sign in a browser \(open once, within 10 minutes\): (\S+)$/m.exec(login.stdout)![1]!);
  t.is(link.origin, world.balancer.url, 'replica A made it, naming the public URL');
  const opened = await b.request('GET', `/setup${link.search}`, { token: null });
  t.is(opened.status, 200, 'opened on replica B');
  t.true(opened.text.includes(`localStorage.setItem('svc.apiToken', ${JSON.stringify(TOKEN)})`));
  for (const api of [a, b]) t.is((await api.request('GET', `/setup${link.search}`, { token: null })).status, 404);

  // Many browsers at once on both replicas: one of them signs in.
  const { path } = (await b.request('POST', '/setup-codes')).body;
  const answers = await Promise.all(
    Array.from({ length: 10 }, (_, i) => world.apis[i % 2]!.request('GET', path, { token: null })),
  );
  t.is(answers.filter((answer) => answer.status === 200).length, 1, answers.map((a) => a.status).join(' '));
  t.true(answers.every((answer) => [200, 400, 404].includes(answer.status)));
});

test.serial('a run dispatched on one replica streams its events from the other; its key holds on both', async (t) => {
  const world = replicas(t);
  if (!world) return;
  const [a, b] = world.apis;
  const key = `replicas-${randomBytes(6).toString('hex')}`;
  const body = { agent: 'shell', prompt: 'for i in 1 2 3; do echo line $i; sleep 1; done' };
  const dispatches = await Promise.all(
    [a, b, a, b].map((api) => api.request('POST', '/runs', { body, headers: { 'Idempotency-Key': key } })),
  );
  t.true(
    dispatches.every((answer) => [200, 201].includes(answer.status)),
    dispatches.map((d) => d.text).join('\n'),
  );
  const ids = new Set(dispatches.map((answer) => answer.body.run.id as string));
  t.is(ids.size, 1, 'one run for one key, whichever replica was asked');
  const [runId] = [...ids];
  // Followed on B until the run's terminal line: the stream ends by itself.
  const stream = await b.request('GET', `/runs/${runId}/events`);
  const lines = stream.text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  t.deepEqual(
    lines.filter((event) => event.stream === 'stdout').map((event) => event.payload.text),
    ['line 1', 'line 2', 'line 3'],
  );
  t.is(lines.at(-1)?.payload?.state, 'succeeded', stream.text.slice(-500));
  t.like((await a.request('GET', `/runs/${runId}`)).body.run, { id: runId, state: 'succeeded' });
  t.is(await world.readModel.em().count(RunEntity, { prompt: body.prompt }), 1, 'and one row');
});

test.serial('a GitHub App registration armed on one replica is finished on the other', async (t) => {
  const world = replicas(t);
  if (!world) return;
  const [a, b] = world.apis;
  // One browser; each request goes to the replica the test names, as a balancer may send it.
  let via: Replica = a;
  const browser = new RegistrationBrowser({ request: (...args) => via.request(...args) });
  const armed = await a.request('POST', '/github-app/registration');
  t.is(armed.status, 201, armed.text);
  via = b;
  const form = await browser.open(armed.body.path);
  t.is(form.status, 200, 'the link armed on A binds the browser on B');
  const state = new URL(unescapeHtml(/<form method="post" action="([^"]+)">/.exec(form.text)![1]!)).searchParams.get(
    'state',
  )!;
  via = a;
  t.is((await browser.open('/github-app/register')).status, 200, 'A knows the browser B bound');
  const callback = `/github-app/callback?code=${forge.manifestCode()}&state=${state}`;
  via = b;
  const stored = await browser.returnFromGitHub(callback);
  t.is(stored.status, 200, stored.text);
  t.regex(stored.text, /svc stored the App/);
  t.like((await a.request('GET', '/github-app')).body.app, { appId: String(forge.app.id), source: 'data-dir' });
  via = a;
  const again = await browser.returnFromGitHub(`/github-app/callback?code=${forge.manifestCode()}&state=${state}`);
  t.is(again.status, 409, 'A sees the App B stored: a registration never replaces it');
  t.is((await a.request('DELETE', '/github-app')).status, 200);
  via = b;
  const replay = await browser.returnFromGitHub(`/github-app/callback?code=${forge.manifestCode()}&state=${state}`);
  t.is(replay.status, 400, 'spent on B, refused on A and B alike');
});

test.serial("a preview login made on either replica opens the preview through the other's proxy", async (t) => {
  const world = replicas(t);
  if (!world) return;
  const [a, b] = world.apis;
  const project = await a.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/replica-preview' } });
  t.is(project.status, 201, project.text);
  const prompt = "printf 'shared\\n' > page.txt && git commit -qam 'the page'";
  const dispatched = await b.request('POST', '/runs', {
    body: { agent: 'shell', project: project.body.project.id, prompt },
  });
  const runId = dispatched.body.run.id as string;
  t.is((await waitForRunState(a, runId, undefined, 120_000)).state, 'succeeded');
  await waitFor(
    async () => (await b.request('GET', `/runs/${runId}`)).body.run.previewState === 'live',
    'the preview',
    90_000,
  );
  for (const [from, through] of [
    [a, b],
    [b, a],
  ] as const) {
    const login = await from.request('POST', `/runs/${runId}/preview/login`, { body: {} });
    t.is(login.status, 200, login.text);
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const page = await fetch(`${through.previewUrl}/p/${runId}/`, { headers: { cookie } });
    t.is(page.status, 200, `a login on ${from.name}, the proxy of ${through.name}`);
    t.is((await page.text()).trim(), 'replicas: shared');
  }
  t.is((await fetch(`${b.previewUrl}/p/${runId}/`)).status, 401, 'no login, no preview');
  t.is((await a.request('POST', `/runs/${runId}/preview/teardown`, { body: {} })).status, 200);
});

test.serial('an API and a worker SIGKILLed mid-flight: every accepted run ends exactly once', async (t) => {
  const world = replicas(t);
  if (!world) return;
  const [a, b] = world.apis;
  const before = await world.readModel.em().count(RunEntity, {});
  const accepted = new Map<string, { runId: string; marker: string }>();
  /** A client that retries with its key until the run is accepted: a cut connection may or may not have started it. */
  const dispatch = async (key: string) => {
    for (;;) {
      const answer: TestResponse | null = await request(world.balancer.url, TOKEN, 'POST', '/runs', {
        body: { agent: 'shell', prompt: TICKING_PROMPT },
        headers: { 'Idempotency-Key': key },
      }).catch(() => null);
      if (answer && [200, 201].includes(answer.status)) {
        accepted.set(key, { runId: answer.body.run.id, marker: markerOf(answer.body) });
        return;
      }
      if (answer && answer.status < 500) throw new Error(`dispatch refused: ${answer.text}`);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  };
  const keys = Array.from({ length: 6 }, (_, i) => `kill-${i}-${randomBytes(4).toString('hex')}`);
  await Promise.all(keys.slice(0, 3).map(dispatch));
  for (const { runId } of accepted.values()) await waitForTicks(world.readModel, runId);

  // The worker supervising the most of them goes, and replica A with it, while more are dispatched.
  const client = new Client({ connection: world.temporal });
  const supervising = new Map<number, number>();
  for (const { runId } of accepted.values()) {
    const pending = (await client.workflow.getHandle(runId).describe()).raw.pendingActivities ?? [];
    for (const activity of pending) {
      const pid = Number(/^(\d+)@/.exec(activity.lastWorkerIdentity ?? '')?.[1]);
      if (pid) supervising.set(pid, (supervising.get(pid) ?? 0) + 1);
    }
  }
  const victim = world.workers.find((worker) => supervising.has(worker.child.pid!))!;
  t.truthy(victim, `a worker holds activities of the runs (${JSON.stringify([...supervising])})`);
  const later = keys
    .slice(3)
    .map((key, i) => new Promise<void>((resolve) => setTimeout(resolve, i * 400)).then(() => dispatch(key)));
  victim.child.kill('SIGKILL');
  a.process.child.kill('SIGKILL');
  await Promise.all([victim.exited, a.process.exited, ...later]);

  t.is(accepted.size, keys.length, 'every dispatch was accepted in the end');
  for (const { runId, marker } of accepted.values()) {
    t.is((await waitForRunState(b, runId, undefined, 180_000)).state, 'succeeded', runId);
    await assertRanExactlyOnce(t, world.readModel, runId, marker);
  }
  t.is(await world.readModel.em().count(RunEntity, {}), before + keys.length, 'one run per key, no more');
  t.is(new Set([...accepted.values()].map(({ runId }) => runId)).size, keys.length);
});
