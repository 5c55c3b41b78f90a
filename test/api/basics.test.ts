// API basics against a real stack: the envelope on every failure, X-Request-ID, bearer auth with
// WWW-Authenticate, and bad input that changes nothing.
import test, { type ExecutionContext } from 'ava';
import { statSync, readFileSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { mintOperatorToken } from '../../stack/operator-token.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

let svc: TestStack;
let connection: Connection;
let workflowsStarted: () => Promise<number>;
test.before(async () => {
  // No worker: a run that slipped through validation would still show up as a started workflow.
  svc = await startTestStack({ worker: false });
  connection = await Connection.connect({ address: svc.stack.temporalAddress });
  const client = new Client({ connection });
  workflowsStarted = async () => (await client.workflow.count(`TaskQueue = '${svc.config.taskQueue}'`)).count;
});
test.after.always(async () => {
  await connection?.close();
  await svc?.stop();
});

function assertEnvelope(t: ExecutionContext, response: { body: any; headers: Headers }, code: string) {
  t.is(response.body?.error?.code, code, JSON.stringify(response.body));
  t.is(typeof response.body.error.message, 'string');
  t.true(response.body.error.message.length > 0);
  t.is(response.headers.get('content-type')?.split(';')[0], 'application/json');
  t.truthy(response.headers.get('x-request-id'));
}

test('healthz and version are anonymous; every response has an X-Request-ID', async (t) => {
  const health = await svc.request('GET', '/healthz', { token: null });
  t.is(health.status, 200);
  t.deepEqual(health.body, { ok: true });
  t.regex(health.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
  const version = await svc.request('GET', '/version', { token: null });
  t.is(version.status, 200);
  t.is(version.body.version, JSON.parse(readFileSync('package.json', 'utf8')).version);
  const echoed = await svc.request('GET', '/healthz', { token: null, headers: { 'x-request-id': 'trace-123' } });
  t.is(echoed.headers.get('x-request-id'), 'trace-123');
});

test('readyz is public like healthz and reports the database and Temporal', async (t) => {
  const ready = await svc.request('GET', '/readyz', { token: null });
  t.is(ready.status, 200);
  t.deepEqual(ready.body, {
    ok: true,
    checks: [
      { name: 'db_reachable', ok: true },
      { name: 'temporal_reachable', ok: true },
    ],
  });
});

test('unknown routes are 404 not_found; a known path with the wrong method is 405 with Allow', async (t) => {
  const missing = await svc.request('GET', '/nope');
  t.is(missing.status, 404);
  assertEnvelope(t, missing, 'not_found');
  const wrongMethod = await svc.request('DELETE', '/runs');
  t.is(wrongMethod.status, 405);
  assertEnvelope(t, wrongMethod, 'method_not_allowed');
  t.regex(wrongMethod.headers.get('allow') ?? '', /GET/);
  t.regex(wrongMethod.headers.get('allow') ?? '', /POST/);
});

test('missing, malformed, wrong tokens are 401 with a Bearer challenge; a query-string token is ignored', async (t) => {
  for (const headers of [{}, { authorization: 'Basic abc' }, { authorization: 'Bearer wrong-token' }] as Record<
    string,
    string
  >[]) {
    const response = await svc.request('GET', '/runs', { token: null, headers });
    t.is(response.status, 401);
    assertEnvelope(t, response, 'unauthorized');
    t.regex(response.headers.get('www-authenticate') ?? '', /^Bearer realm="svc"/);
  }
  const viaQuery = await svc.request('GET', `/runs?access_token=${svc.token}&token=${svc.token}`, { token: null });
  t.is(viaQuery.status, 401);
  const lowercaseScheme = await svc.request('GET', '/runs', {
    token: null,
    headers: { authorization: `bearer ${svc.token}` },
  });
  t.is(lowercaseScheme.status, 200);
});

test('the operator token was generated once into a 0600 file in the data directory', async (t) => {
  t.is(svc.stack.token.source, 'file');
  const path = svc.stack.token.path!;
  t.is(statSync(path).mode & 0o777, 0o600);
  t.is(readFileSync(path, 'utf8').trim(), svc.token);
  t.true(svc.token.length >= 43);
});

const invalidDispatches: [string, unknown, RegExp][] = [
  ['no agent', { prompt: 'x' }, /field "agent"/],
  ['blank prompt', { agent: 'shell', prompt: '   ' }, /field "prompt"/],
  ['prompt of the wrong type', { agent: 'shell', prompt: 42 }, /field "prompt"/],
  ['negative cap', { agent: 'shell', prompt: 'x', maxCostUsd: -1 }, /field "maxCostUsd"/],
  ['short base commit', { agent: 'shell', prompt: 'x', baseCommit: 'abc123' }, /field "baseCommit"/],
  ['unknown field', { agent: 'shell', prompt: 'x', sneaky: true }, /sneaky/],
  ['array body', [], /expected object/i],
  ['a NUL character in the prompt', { agent: 'shell', prompt: 'echo a\u0000b' }, /remove it/],
];

for (const [name, body, hint] of invalidDispatches) {
  test(`POST /runs with ${name} is 400 validation_error, its hint naming the field; nothing starts`, async (t) => {
    const response = await svc.request('POST', '/runs', { body });
    t.is(response.status, 400);
    assertEnvelope(t, response, 'validation_error');
    t.regex(response.body.error.hint, hint);
    t.is(await workflowsStarted(), 0);
  });
}

test('POST /runs with malformed JSON, no body, or a non-JSON type is rejected with the envelope', async (t) => {
  const malformed = await svc.request('POST', '/runs', {
    rawBody: '{"agent":',
    headers: { 'content-type': 'application/json' },
  });
  t.is(malformed.status, 400);
  assertEnvelope(t, malformed, 'validation_error');
  const bare = await svc.request('POST', '/runs');
  t.is(bare.status, 415, 'a required body needs its Content-Type, even when absent (docs/security.md)');
  assertEnvelope(t, bare, 'unsupported_media_type');
  const empty = await svc.request('POST', '/runs', { headers: { 'content-type': 'application/json' } });
  t.is(empty.status, 400);
  assertEnvelope(t, empty, 'validation_error');
  const untyped = await svc.request('POST', '/runs', { rawBody: JSON.stringify({ agent: 'shell', prompt: 'x' }) });
  t.is(untyped.status, 415, 'a JSON body sent as text (fetch labels a string text/plain) is refused');
  const text = await svc.request('POST', '/runs', {
    rawBody: 'agent=shell',
    headers: { 'content-type': 'text/plain' },
  });
  t.is(text.status, 415);
  assertEnvelope(t, text, 'unsupported_media_type');
  t.is(await workflowsStarted(), 0);
});

test('a JSON body over 1 MiB is 413 with the envelope, the connection is closed, and nothing starts', async (t) => {
  const huge = JSON.stringify({ agent: 'shell', prompt: 'x'.repeat(1 << 20) });
  const refused = await svc.request('POST', '/runs', {
    rawBody: huge,
    headers: { 'content-type': 'application/json' },
  });
  t.is(refused.status, 413);
  assertEnvelope(t, refused, 'payload_too_large');
  t.is(refused.headers.get('connection'), 'close', 'the unread rest of the body is not taken for a next request');
  // The API goes on answering.
  t.is((await svc.request('GET', '/healthz', { token: null })).status, 200);
  t.is(await workflowsStarted(), 0);
});

test('GET /agents says how each agent is steered, whose cost it reports and which credentials it reads', async (t) => {
  const { agents } = (await svc.request('GET', '/agents')).body;
  const byName = new Map(agents.map((agent: { name: string }) => [agent.name, agent]));
  t.like(byName.get('shell'), { runtime: 'command', steering: 'spawn-only', costBasis: 'api', credentials: [] });
  t.like(byName.get('claude-code'), { runtime: 'claude-code', steering: 'mid-run' });
  t.deepEqual((byName.get('claude-code') as { credentials: string[] }).credentials, [
    'ANTHROPIC_API_KEY',
    'ANTHROPIC_AUTH_TOKEN',
    'CLAUDE_CODE_OAUTH_TOKEN',
  ]);
  t.like(byName.get('codex'), {
    runtime: 'codex',
    steering: 'spawn-only',
    credentials: ['OPENAI_API_KEY', 'CODEX_API_KEY'],
  });
  t.like(byName.get('opencode'), { steering: 'spawn-only' });
});

test('POST /runs naming an unknown agent or project is 404 and starts nothing', async (t) => {
  const agent = await svc.request('POST', '/runs', { body: { agent: 'nobody', prompt: 'x' } });
  t.is(agent.status, 404);
  assertEnvelope(t, agent, 'not_found');
  t.regex(agent.body.error.hint, /GET \/agents/);
  const project = await svc.request('POST', '/runs', {
    body: { agent: 'shell', project: 'prj_000000000000', prompt: 'x' },
  });
  t.is(project.status, 404);
  assertEnvelope(t, project, 'not_found');
  t.is(await workflowsStarted(), 0);
});

test('GET /runs validates its query and GET /runs/{id} answers 404 for an unknown run', async (t) => {
  for (const query of [
    'limit=0',
    'limit=501',
    'limit=abc',
    'offset=-1',
    'sort=name',
    'dir=up',
    'project=a&agent=b',
    'bogus=1',
  ]) {
    const response = await svc.request('GET', `/runs?${query}`);
    t.is(response.status, 400, query);
    assertEnvelope(t, response, 'validation_error');
  }
  const missing = await svc.request('GET', '/runs/run_000000000000');
  t.is(missing.status, 404);
  assertEnvelope(t, missing, 'not_found');
});

test('generated operator tokens never start with "-" (they must pass as a CLI flag value)', async (t) => {
  for (let i = 0; i < 2000; i++) t.regex(mintOperatorToken(), /^[A-Za-z0-9][A-Za-z0-9_-]{42}$/);
});

test('a NUL character in a path or query parameter is 400 validation_error, not a database error', async (t) => {
  for (const path of [
    '/plan-runs?project=a%00b&state=active',
    '/runs?agent=x%00',
    '/runs/run_%00',
    '/projects/prj_%00',
  ]) {
    const response = await svc.request('GET', path);
    t.is(response.status, 400, path);
    assertEnvelope(t, response, 'validation_error');
  }
});
