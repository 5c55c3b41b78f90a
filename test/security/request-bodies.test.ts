// What a run's agent can do with the bodies it sends to its own callback routes: a body past the
// limit is refused with 413 and its connection closed (the rest is never read as a next request),
// and a request cut off mid-body ends its handler; the API and the run go on either way.
import test from 'ava';
import { connect } from 'node:net';
import { mintRunToken } from '../../core/run-token.ts';
import { startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

let svc: TestStack;
let runId: string;
test.before(async () => {
  svc = await startTestStack();
  runId = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'sleep 300' } })).body.run.id;
  await waitForRunState(svc, runId, ['running']);
});
test.after.always(() => svc?.stop());

/** The API's count of answered requests to the finalize-result route, from its own metrics. */
async function finalizeResultRequests(): Promise<number> {
  const text = (await svc.request('GET', '/metrics')).text;
  return [
    ...text.matchAll(/^svc_http_request_seconds_count\{[^}]*route="\/runs\/\{id\}\/finalize-result"[^}]*\} (\d+)/gm),
  ]
    .map((match) => Number(match[1]))
    .reduce((sum, count) => sum + count, 0);
}

test.serial('a body past 1 MiB from a run is 413, its connection closed, and the run goes on', async (t) => {
  const huge = JSON.stringify({ attemptId: 'x', result: { padding: 'x'.repeat(1 << 20) } });
  const refused = await svc.request('POST', `/runs/${runId}/finalize-result`, {
    token: mintRunToken(svc.token, runId),
    rawBody: huge,
    headers: { 'content-type': 'application/json' },
  });
  t.is(refused.status, 413);
  t.is(refused.body.error.code, 'payload_too_large');
  t.is(refused.headers.get('connection'), 'close');
  t.is((await svc.request('GET', `/runs/${runId}`)).body.run.state, 'running');
});

test.serial('a request cut off mid-body ends its handler, and the API answers on', async (t) => {
  const before = await finalizeResultRequests();
  const port = Number(new URL(svc.url).port);
  await new Promise<void>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(
        `POST /runs/${runId}/finalize-result HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
          `Authorization: Bearer ${mintRunToken(svc.token, runId)}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"attemptId":',
      );
      // Gone before the body's end, as an agent killed mid-request would be.
      setTimeout(() => socket.destroy(), 50);
    });
    socket.on('close', () => resolve());
    socket.on('error', reject);
  });
  // The handler ended (a handler left waiting would never be counted), and nothing else changed.
  const deadline = Date.now() + 5000;
  while ((await finalizeResultRequests()) === before && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 50));
  t.is(await finalizeResultRequests(), before + 1);
  t.is((await svc.request('GET', '/healthz', { token: null })).status, 200);
  t.is((await svc.request('GET', `/runs/${runId}`)).body.run.state, 'running');
});
