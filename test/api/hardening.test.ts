// The small ways to wedge or confuse the API, each closed: a prompt longer than an environment
// variable reaches the agent; deep JSON is a 400; following streams are capped; an Idempotency-Key
// repeats the run as it is now, and a different request with the same key is refused; a project
// is one project however its URL is cased; a run token can ask who it is.
import test from 'ava';
import { mintRunToken } from '../../core/run-token.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { startTestStack, waitForRunState, type TestStack, runStdout } from '../support/stack.ts';

const github = new GitHubStandIn();
let svc: TestStack;
test.before(async () => {
  svc = await startTestStack({ env: { SVC_EVENT_STREAM_MAX: '2' } });
});
test.after.always(() => svc?.stop());

const stdout = (runId: string) => runStdout(svc, runId);

test.serial('a prompt of 300 KiB reaches the agent whole (a file, not the environment)', async (t) => {
  const filler = `# ${'x'.repeat(1000)}\n`.repeat(300);
  const prompt = `${filler}echo bytes=$(wc -c < "$SVC_PROMPT_FILE")\necho env=\${#SVC_PROMPT}`;
  const { body } = await svc.request('POST', '/runs', { body: { agent: 'shell', prompt } });
  const run = await waitForRunState(svc, body.run.id);
  t.is(run.state, 'succeeded', JSON.stringify(run));
  const lines = await stdout(run.id);
  t.true(lines.includes(`bytes=${Buffer.byteLength(prompt)}`), lines.join('\n'));
  t.true(lines.includes('env=0'), 'too long for the environment: only the file carries it');
});

test.serial('JSON nested deeper than 64 levels is a 400, not a crash', async (t) => {
  const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
  const response = await svc.request('POST', '/runs', {
    rawBody: `{"agent":"shell","prompt":"x","metadata":${deep}}`,
    headers: { 'content-type': 'application/json' },
  });
  t.is(response.status, 400);
  t.is(response.body.error.code, 'validation_error');
  t.regex(response.body.error.message, /deeper than 64/);
});

test.serial('following event streams are capped per process: the next one is 503 event_stream_capacity', async (t) => {
  const runId = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'sleep 30' } })).body.run.id;
  await waitForRunState(svc, runId, ['running']);
  const held = [new AbortController(), new AbortController()];
  t.teardown(() => held.forEach((controller) => controller.abort()));
  for (const controller of held) {
    const response = await fetch(`${svc.url}/runs/${runId}/events`, {
      headers: { authorization: `Bearer ${svc.token}` },
      signal: controller.signal,
    });
    t.is(response.status, 200);
  }
  const third = await svc.request('GET', `/runs/${runId}/events`);
  t.is(third.status, 503);
  t.is(third.body.error.code, 'event_stream_capacity');
  t.is(third.headers.get('retry-after'), '5');
  t.is(
    (await svc.request('GET', `/runs/${runId}/events?follow=0`)).status,
    200,
    'a read that does not follow is not capped',
  );
  held.forEach((controller) => controller.abort());
  await svc.request('POST', `/runs/${runId}/cancel`);
});

test.serial('an Idempotency-Key answers the run as it is now; another request with the same key is 409', async (t) => {
  const body = { agent: 'shell', prompt: 'echo once' };
  const headers = { 'idempotency-key': `key-${Date.now()}` };
  const first = await svc.request('POST', '/runs', { body, headers });
  t.is(first.status, 201);
  await waitForRunState(svc, first.body.run.id);
  const again = await svc.request('POST', '/runs', { body: { prompt: 'echo once', agent: 'shell' }, headers });
  t.is(again.status, 201);
  t.is(again.body.run.id, first.body.run.id);
  t.is(again.body.run.state, 'succeeded', 'the run as it is now, not the queued snapshot');
  const other = await svc.request('POST', '/runs', {
    body: { agent: 'shell', prompt: 'echo something else' },
    headers,
  });
  t.is(other.status, 409);
  t.is(other.body.error.code, 'idempotency_key_reused');
});

test.serial('a project is one project however its URL is cased', async (t) => {
  github.createRepo('acme', 'demo');
  const first = await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/demo' } });
  t.is(first.status, 201, first.text);
  const shouted = await svc.request('POST', '/projects', { body: { gitUrl: 'https://GITHUB.com/ACME/Demo' } });
  t.not(shouted.status, 201, 'not a second project');
  t.is(
    (await svc.request('GET', '/projects')).body.projects.filter(
      (row: any) => row.gitUrl === 'https://github.com/acme/demo',
    ).length,
    1,
  );
});

test.serial('a run token asking GET /whoami learns it is a run, with no capability of the API', async (t) => {
  const runId = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'sleep 30' } })).body.run.id;
  await waitForRunState(svc, runId, ['running']);
  const whoami = await svc.request('GET', '/whoami', { token: mintRunToken(svc.token, runId) });
  t.is(whoami.status, 200);
  t.deepEqual(whoami.body, { identity: 'run', capabilities: [], runId });
  await svc.request('POST', `/runs/${runId}/cancel`);
  t.is(
    (await svc.request('GET', '/whoami', { token: mintRunToken(svc.token, runId) })).status,
    401,
    'not once it has ended',
  );
});
