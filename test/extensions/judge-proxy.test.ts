// GET /extensions/judge/verdicts.jsonl against a local judge stand-in: pass-through of the query,
// the body and X-Verdicts-Max-Id; the server's export token upstream, never the caller's;
// upstream failures and redirects are 502; no configuration is 501; operators only.
import test from 'ava';
import { createServer, type IncomingMessage } from 'node:http';
import { closeServer, listenOnLoopback } from '../support/loopback-server.ts';
import { mintRunToken } from '../../core/run-token.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

const EXPORT_TOKEN = 'judge-export-secret';
const seen: { url: string; authorization: string | undefined }[] = [];
let mode: 'ok' | 'error' | 'redirect' = 'ok';
const ROWS = [
  {
    id: 7,
    kind: 'verdict',
    runId: 'run_aaaaaaaaaaaa',
    rubricVersion: 'r1',
    judgeModelId: 'm',
    verdict: { runId: 'run_aaaaaaaaaaaa', assignments: [{ class: 'clean', confidence: 'high', evidence: [] }] },
    reason: null,
  },
  {
    id: 8,
    kind: 'unjudged',
    runId: 'run_bbbbbbbbbbbb',
    rubricVersion: 'r1',
    judgeModelId: 'm',
    verdict: null,
    reason: 'budget_exceeded',
  },
];
const upstream = createServer((req: IncomingMessage, res) => {
  seen.push({ url: req.url ?? '', authorization: req.headers.authorization });
  if (mode === 'error') return void res.writeHead(500, { 'content-type': 'text/plain' }).end('boom');
  if (mode === 'redirect') return void res.writeHead(302, { location: 'http://127.0.0.1:9/steal' }).end();
  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'x-verdicts-max-id': '8' });
  res.end(ROWS.map((row) => JSON.stringify(row)).join('\n') + '\n');
});

let configured: TestStack;
let bare: TestStack;
test.before(async () => {
  const url = await listenOnLoopback(upstream);
  configured = await startTestStack({
    worker: false,
    env: { SVC_JUDGE_BASE_URL: url, SVC_JUDGE_EXPORT_TOKEN: EXPORT_TOKEN },
  });
  bare = await startTestStack({ worker: false });
});
test.after.always(async () => {
  await configured?.stop();
  await bare?.stop();
  await closeServer(upstream);
});

test.serial(
  'passes the query through, streams the rows back with the max id, and sends only the server token upstream',
  async (t) => {
    mode = 'ok';
    const response = await configured.request('GET', '/extensions/judge/verdicts.jsonl?since=6&limit=2&order=asc');
    t.is(response.status, 200);
    t.is(response.headers.get('x-verdicts-max-id'), '8');
    t.regex(response.headers.get('content-type') ?? '', /application\/x-ndjson/);
    t.deepEqual(
      response.text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line)),
      ROWS,
    );
    const last = seen.at(-1)!;
    t.is(last.url, '/verdicts.jsonl?since=6&limit=2&order=asc');
    t.is(last.authorization, `Bearer ${EXPORT_TOKEN}`);
    t.false(
      seen.some((request) => request.authorization?.includes(configured.token)),
      "the caller's token never goes upstream",
    );
  },
);

test.serial('upstream 500 and an upstream redirect are 502; the redirect is not followed', async (t) => {
  mode = 'error';
  const failed = await configured.request('GET', '/extensions/judge/verdicts.jsonl');
  t.is(failed.status, 502);
  t.is(failed.body.error.code, 'judge_export_failed');
  mode = 'redirect';
  const before = seen.length;
  const redirected = await configured.request('GET', '/extensions/judge/verdicts.jsonl');
  t.is(redirected.status, 502);
  t.is(redirected.body.error.code, 'judge_export_failed');
  t.is(seen.length, before + 1, 'one upstream request, no follow-up');
});

test.serial('bad query values are 400 and never reach the judge', async (t) => {
  mode = 'ok';
  const before = seen.length;
  for (const query of ['since=-1', 'limit=0', 'order=sideways', 'since=abc', 'extra=1']) {
    const response = await configured.request('GET', `/extensions/judge/verdicts.jsonl?${query}`);
    t.is(response.status, 400, query);
    t.is(response.body.error.code, 'validation_error', query);
  }
  t.is(seen.length, before);
});

test.serial('without configuration: 501 judge_not_configured, an envelope and never a page', async (t) => {
  const response = await bare.request('GET', '/extensions/judge/verdicts.jsonl');
  t.is(response.status, 501);
  t.is(response.body.error.code, 'judge_not_configured');
  t.regex(response.headers.get('content-type') ?? '', /application\/json/);
});

test.serial('operators only: no token is 401, a run token is 403', async (t) => {
  const anonymous = await configured.request('GET', '/extensions/judge/verdicts.jsonl', { token: null });
  t.is(anonymous.status, 401);
  const runToken = await configured.request('GET', '/extensions/judge/verdicts.jsonl', {
    token: mintRunToken(configured.token, 'run_aaaaaaaaaaaa'),
  });
  t.is(runToken.status, 403);
});
