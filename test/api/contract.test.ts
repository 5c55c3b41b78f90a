// The contract: every response svc sends validates against its own committed OpenAPI document
// (docs/openapi.json), strictly (no member the document does not name), on both databases. The
// server is populated first (a project from the forge stand-in, runs and plan-runs in every state),
// so routes that need an existing thing answer for real; every operation of the document must be
// reached with a success at least once, and its errors are checked against the envelope too. Then
// schemathesis fuzzes the same populated server with real ids (test/support/schemathesis.ts).
import test from 'ava';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { DATABASE_LEGS, postgresOrSkip, type DatabaseLeg } from '../support/env.ts';
import { populatedStack, type PopulatedIds, type PopulatedStack } from '../support/populated.ts';
import { serveManifestConversions, standInApp } from '../support/github-app-standin.ts';
import { dataPaths } from '../../platform/config.ts';
import { operatorBrowser } from '../support/registration-browser.ts';
import { runSchemathesis, SCHEMATHESIS } from '../support/schemathesis.ts';
import type { TestResponse } from '../support/stack.ts';

type Json = Record<string, any>;
const document = JSON.parse(readFileSync('docs/openapi.json', 'utf8')) as Json;
const ajv = new Ajv2020({ strict: false, allErrors: true });

/** Replaces `#/components/schemas/X` references by the schema itself. */
function inline(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(inline);
  if (!schema || typeof schema !== 'object') return schema;
  const ref = (schema as Json).$ref as string | undefined;
  if (ref?.startsWith('#/components/schemas/')) return inline(document.components.schemas[ref.split('/').at(-1)!]);
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, inline(value)]));
}

const operations = Object.entries(document.paths as Json).flatMap(([template, methods]) =>
  Object.entries(methods as Json).map(([method, operation]) => ({
    key: `${method.toUpperCase()} ${template}`,
    method: method.toUpperCase(),
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    operation: operation as Json,
  })),
);

/** Why the response breaks the document, or null when it conforms. */
function violation(method: string, path: string, response: TestResponse): { key: string; problem: string | null } {
  const bare = path.split('?')[0]!;
  const found = operations.find((candidate) => candidate.method === method && candidate.pattern.test(bare));
  if (!found) return { key: `${method} ${bare}`, problem: 'no such operation in the document' };
  const declared = found.operation.responses[String(response.status)] ?? found.operation.responses.default;
  if (!declared) return { key: found.key, problem: `status ${response.status} is not documented` };
  const contentType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
  if (!declared.content)
    return { key: found.key, problem: response.text ? `undocumented body: ${response.text}` : null };
  const media = declared.content[contentType];
  if (!media) return { key: found.key, problem: `content type ${contentType} is not documented` };
  const validate = ajv.compile(inline(media.schema) as Json);
  const values =
    contentType === 'application/x-ndjson'
      ? response.text
          .split('\n')
          .filter((line, index, lines) => line !== '' || index < lines.length - 1)
          .map((line) => JSON.parse(line))
      : contentType.startsWith('text/')
        ? [response.text]
        : [response.body];
  for (const value of values)
    if (!validate(value))
      return {
        key: found.key,
        problem: `${ajv.errorsText(validate.errors)} in ${JSON.stringify(value).slice(0, 400)}`,
      };
  return { key: found.key, problem: null };
}

interface Call {
  method: string;
  path: string;
  body?: unknown;
  /** 'run': the held run's own token; null: no credential. */
  token?: 'run' | null;
  headers?: Record<string, string>;
}

/** Every operation, with real ids: successes first, then a few refusals. */
function calls(
  ids: PopulatedIds,
  setupCode: string,
  app: { code: string; state: string; browser: Record<string, string> },
): Call[] {
  const { runs, planRuns, project } = ids;
  const run = runs.running;
  return [
    { method: 'GET', path: '/healthz' },
    { method: 'GET', path: '/readyz' },
    { method: 'GET', path: '/instance' },
    { method: 'GET', path: '/instance', token: null },
    { method: 'GET', path: '/ops/overview?window=30d' },
    { method: 'GET', path: '/ops/overview', token: null },
    { method: 'GET', path: '/metrics' },
    {
      method: 'POST',
      path: '/alerts/heal?source=grafana',
      body: { alerts: [{ status: 'firing', labels: { a: 'b' } }] },
    },
    { method: 'POST', path: '/alerts/heal?source=sentry', body: {} },
    { method: 'GET', path: '/analytics/runs?from=2020-01-01' },
    { method: 'GET', path: '/analytics/runs', token: null },
    { method: 'GET', path: `/analytics/cost?projectId=${project}` },
    { method: 'GET', path: '/analytics/runs?from=not-a-date' },
    { method: 'GET', path: '/analytics/dispatch?from=2020-01-01' },
    { method: 'GET', path: `/analytics/behavior?projectId=${project}` },
    { method: 'GET', path: '/analytics/behavior', token: null },
    { method: 'GET', path: '/analytics/dispatch?to=2026-02-30' },
    { method: 'GET', path: `/setup?code=${setupCode}`, token: null },
    { method: 'GET', path: '/setup?code=spent', token: null },
    { method: 'POST', path: '/setup-codes', body: {} },
    { method: 'GET', path: '/github-app' },
    { method: 'DELETE', path: '/github-app' },
    { method: 'GET', path: '/github-app/register?org=acme', token: null },
    { method: 'GET', path: '/github-app/register?org=acme', token: null, headers: app.browser },
    { method: 'GET', path: '/github-app/register?org=-not-a-login', token: null, headers: app.browser },
    { method: 'GET', path: `/github-app/callback?code=${app.code}&state=${app.state}`, token: null },
    {
      method: 'GET',
      path: `/github-app/callback?code=${app.code}&state=${app.state}`,
      token: null,
      headers: app.browser,
    },
    {
      method: 'GET',
      path: `/github-app/callback?code=${app.code}&state=${app.state}`,
      token: null,
      headers: app.browser,
    },
    { method: 'GET', path: '/github-app/installed?installation_id=12&setup_action=install', token: null },
    {
      method: 'GET',
      path: '/github-app/installed?installation_id=12&setup_action=install',
      token: null,
      headers: app.browser,
    },
    { method: 'POST', path: '/github-app/registration' },
    { method: 'GET', path: '/whoami' },
    { method: 'GET', path: '/whoami', token: 'run' },
    { method: 'GET', path: '/version' },
    { method: 'GET', path: '/openapi.json', token: null },
    { method: 'GET', path: '/runs' },
    { method: 'GET', path: '/runs?state=succeeded&limit=5' },
    ...Object.values(runs).flatMap((id) => [
      { method: 'GET', path: `/runs/${id}` },
      { method: 'GET', path: `/runs/${id}/events?follow=0` },
      { method: 'GET', path: `/runs/${id}/log` },
      { method: 'GET', path: `/runs/${id}/diff` },
    ]),
    { method: 'GET', path: '/runs/run_000000000000/diff' },
    { method: 'GET', path: `/runs/${runs.succeeded}/events?limit=2` },
    { method: 'GET', path: `/runs/${runs.succeeded}/events?before=${Number.MAX_SAFE_INTEGER}&limit=2` },
    { method: 'POST', path: `/runs/${run}/steer`, body: { body: 'keep going' } },
    { method: 'POST', path: `/runs/${ids.paused}/resume`, body: { maxCostUsd: 0.5 } },
    { method: 'POST', path: `/runs/${ids.paused}/resume`, body: { maxCostUsd: 5 } },
    { method: 'POST', path: `/runs/${runs.succeeded}/resume`, body: { maxCostUsd: 5 } },
    { method: 'GET', path: `/runs/${run}/inbox?peek=1` },
    { method: 'GET', path: `/runs/${run}/inbox`, token: 'run' },
    { method: 'GET', path: `/runs/${run}/finalize-intent`, token: 'run' },
    {
      method: 'POST',
      path: `/runs/${run}/finalize-result`,
      token: 'run',
      body: {
        version: 1,
        attemptId: 'no-such-attempt',
        result: {
          pushed: false,
          commitsAhead: 0,
          emptyPush: true,
          dirty: false,
          events: [],
          prBranch: null,
          stages: [],
        },
      },
    },
    {
      method: 'POST',
      path: `/runs/${run}/salvage`,
      token: 'run',
      body: {
        version: 1,
        trigger: 'no_intent',
        rescueRef: 'refs/svc/rescue',
        bundleBase64: null,
        branch: null,
        baseBranch: null,
      },
    },
    { method: 'POST', path: `/runs/${run}/git-credential`, token: 'run' },
    { method: 'GET', path: '/preview/config' },
    { method: 'POST', path: `/runs/${ids.previewRun}/preview/login`, body: {} },
    { method: 'POST', path: `/runs/${ids.previewRun}/preview/login`, body: { redirect: 'https://elsewhere.example/' } },
    { method: 'POST', path: `/runs/${runs.failed}/preview/login`, body: {} },
    { method: 'POST', path: `/runs/${runs.failed}/preview/teardown`, body: {} },
    { method: 'POST', path: `/runs/${runs.succeeded}/cancel`, body: {} },
    { method: 'POST', path: '/runs', body: { agent: 'shell', prompt: 'echo contract', project } },
    {
      method: 'POST',
      path: '/runs',
      body: { agent: 'shell', prompt: 'echo labelled', metadata: { ticket: 'ABC-1', attempt: 2 } },
    },
    { method: 'GET', path: '/plan-runs' },
    { method: 'GET', path: '/plan-runs?state=failed' },
    ...Object.values(planRuns).flatMap((id) => [
      { method: 'GET', path: `/plan-runs/${id}` },
      { method: 'GET', path: `/plan-runs/${id}/events` },
    ]),
    { method: 'POST', path: `/plan-runs/${planRuns.succeeded}/cancel`, body: {} },
    { method: 'POST', path: `/plan-runs/${planRuns.failed}/resume`, body: {} },
    { method: 'GET', path: '/projects' },
    { method: 'GET', path: `/projects/${project}` },
    { method: 'POST', path: `/projects/${project}/refresh`, body: {} },
    { method: 'GET', path: `/projects/${project}/seeds/plans` },
    { method: 'GET', path: `/projects/${project}/seeds/${ids.seedId}` },
    { method: 'GET', path: `/projects/${project}/ready-plans` },
    { method: 'GET', path: `/projects/${project}/svc-config` },
    { method: 'GET', path: `/projects/${project}/triggers` },
    { method: 'POST', path: `/projects/${project}/triggers/${ids.triggerId}/run`, body: {} },
    { method: 'PUT', path: `/projects/${project}/secrets/CONTRACT_TOKEN`, body: { value: 'contract-value-1' } },
    { method: 'PUT', path: `/projects/${project}/secrets/CONTRACT_TOKEN`, body: { value: 'v2', scope: 'setup' } },
    { method: 'PUT', path: `/projects/${project}/secrets/SVC_NOPE`, body: { value: 'refused' } },
    { method: 'GET', path: `/projects/${project}/secrets` },
    { method: 'DELETE', path: `/projects/${project}/secrets/CONTRACT_TOKEN` },
    { method: 'DELETE', path: `/projects/${project}/secrets/CONTRACT_TOKEN` },
    { method: 'POST', path: `/projects/${ids.spareProject}/init`, body: {} },
    { method: 'POST', path: `/projects/${ids.legacyProject}/config-migrate`, body: {} },
    { method: 'DELETE', path: `/projects/${ids.spareProject}` },
    { method: 'POST', path: '/projects', body: { gitUrl: ids.unregisteredGitUrl } },
    { method: 'POST', path: '/projects', body: { gitUrl: 'https://github.com/contract/nowhere' } },
    {
      method: 'POST',
      path: '/plan-runs',
      body: { project, agent: 'shell', planId: ids.planId, promptTemplate: 'echo {seed_id}' },
    },
    { method: 'GET', path: '/agents' },
    { method: 'GET', path: '/agents/shell' },
    { method: 'GET', path: '/forge/repos' },
    { method: 'GET', path: '/events' },
    { method: 'GET', path: '/events/stream?follow=0' },
    { method: 'GET', path: '/webhooks' },
    { method: 'GET', path: `/webhooks/${ids.webhook}/deliveries?limit=5` },
    { method: 'GET', path: `/webhooks/${ids.webhook}/secret` },
    { method: 'POST', path: '/webhooks', body: { url: 'https://hooks.example/svc', description: 'contract' } },
    { method: 'POST', path: '/webhooks', body: { url: 'not a url' } },
    { method: 'DELETE', path: `/webhooks/${ids.webhook}` },
    { method: 'DELETE', path: `/webhooks/${ids.webhook}` },
    { method: 'GET', path: '/extensions/judge/verdicts.jsonl?limit=1' },
    // Refusals: each is an envelope the document names.
    { method: 'GET', path: '/runs/run_000000000000' },
    { method: 'GET', path: '/runs?state=nope' },
    { method: 'POST', path: '/runs', body: { agent: 'shell' } },
    { method: 'POST', path: `/runs/${runs.failed}/steer`, body: { body: 'too late' } },
    { method: 'GET', path: '/plan-runs/plnr_000000000000' },
    { method: 'POST', path: `/plan-runs/${planRuns.succeeded}/resume`, body: {} },
    { method: 'DELETE', path: `/projects/${project}` },
    { method: 'GET', path: '/projects', token: null },
  ];
}

/** One populated server per database, shared by the contract check and the fuzzer. */
const servers = new Map<string, Promise<PopulatedStack>>();
const populated = (leg: DatabaseLeg) => {
  // A public URL: the GitHub App's registration (reached below) names it in its manifest.
  if (!servers.has(leg))
    servers.set(leg, populatedStack(leg, `contract-${leg}`, { SVC_PUBLIC_URL: 'http://svc.example.test' }));
  return servers.get(leg)!;
};
test.after.always(async () => {
  for (const server of servers.values()) await (await server.catch(() => undefined))?.stop();
});

for (const leg of DATABASE_LEGS) {
  test.serial(`${leg}: every response of every route validates against docs/openapi.json, strictly`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    const { svc, ids, fixture } = await populated(leg);
    const problems: string[] = [];
    const succeeded = new Set<string>();
    const setupCode = new URL((await svc.stack.setupLink())!).searchParams.get('code')!;
    // A GitHub App registration in flight: the operator's bound browser, its form's state, and a
    // code the forge stand-in converts.
    const { browser, page: register } = await operatorBrowser(svc);
    const app = {
      code: serveManifestConversions(fixture.forge).code(),
      state: register.text.match(/state=([\w-]+)/)![1]!,
      browser: { cookie: `svc_github_app=${browser.cookie}` },
    };
    // An App stored (not installed) for DELETE /github-app to remove.
    const stored = standInApp();
    writeFileSync(
      dataPaths.githubApp(svc.config.dataDir),
      JSON.stringify({ ...stored, appId: String(stored.id), privateKey: stored.pem, installationId: null }),
      { mode: 0o600 },
    );
    for (const call of calls(ids, setupCode, app)) {
      const token = call.token === 'run' ? ids.runToken : call.token;
      const response = await svc.request(call.method, call.path, {
        body: call.body,
        headers: call.headers,
        ...(token === undefined ? {} : { token }),
      });
      const { key, problem } = violation(call.method, call.path, response);
      if (problem) problems.push(`${call.method} ${call.path} → ${response.status}: ${problem}`);
      if (response.status < 300) succeeded.add(key);
    }
    t.deepEqual(problems, []);
    // What the fuzzer found once: the caller's mistakes are 4xx, never a 5xx.
    const unknownRef = await svc.request('POST', `/projects/${ids.project}/refresh`, { body: { ref: 'no-such-ref' } });
    t.is(unknownRef.status, 404, unknownRef.text);
    const nullBody = await svc.request('POST', `/runs/${ids.runs.succeeded}/cancel`, {
      rawBody: 'null',
      headers: { 'content-type': 'application/json' },
    });
    t.is(nullBody.status, 400);
    t.deepEqual(
      operations.map((operation) => operation.key).filter((key) => !succeeded.has(key)),
      [],
      'every operation of the document answered a success at least once',
    );
  });

  test.serial(`${leg}: schemathesis finds nothing wrong with the populated server`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    if (!existsSync(SCHEMATHESIS)) {
      if (process.env.CI) return t.fail(`schemathesis is not installed at ${SCHEMATHESIS}`);
      t.log('schemathesis is not installed here (npm test installs it): not run');
      return t.pass();
    }
    const { svc, ids } = await populated(leg);
    const { code, output } = await runSchemathesis(svc, ids, 35);
    t.is(code, 0, output.slice(-6000));
    t.regex(output, /Tested: \d+/);
  });
}
