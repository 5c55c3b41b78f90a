// The judge proxy gives up on silence, not on length: a slow export that keeps sending streams to
// its end, one that stops sending is cut after the idle time.
import test from 'ava';
import { createServer } from 'node:http';
import { closeServer, listenOnLoopback } from '../support/loopback-server.ts';
import { JudgeProxy } from '../../api/services/judge-proxy.ts';

const ROWS = 6;
let stallAfter: number | null = null;
const upstream = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'x-verdicts-max-id': String(ROWS) });
  let sent = 0;
  const timer = setInterval(() => {
    if (stallAfter !== null && sent >= stallAfter) return;
    res.write(`${JSON.stringify({ id: ++sent, kind: 'unjudged' })}\n`);
    if (sent === ROWS) {
      clearInterval(timer);
      res.end();
    }
  }, 150);
  res.once('close', () => clearInterval(timer));
});
let url = '';
test.before(async () => {
  url = await listenOnLoopback(upstream);
});
test.after.always(() => closeServer(upstream));

async function readAll(proxy: JudgeProxy): Promise<{ lines: number; error: string | null; ms: number }> {
  const started = Date.now();
  const page = await proxy.verdicts({}, new AbortController().signal);
  let text = '';
  try {
    for await (const chunk of page.body) text += chunk;
    return { lines: text.split('\n').filter(Boolean).length, error: null, ms: Date.now() - started };
  } catch (error) {
    return {
      lines: text.split('\n').filter(Boolean).length,
      error: (error as Error).message,
      ms: Date.now() - started,
    };
  }
}

test.serial('a slow export longer than the idle time streams to its end', async (t) => {
  stallAfter = null;
  const result = await readAll(new JudgeProxy({ baseUrl: url, exportToken: 'x', timeoutMs: 500 }));
  t.is(result.error, null);
  t.is(result.lines, ROWS);
  t.true(result.ms > 500, `the export took ${result.ms} ms, longer than the idle limit`);
});

test.serial('an export that goes silent is cut after the idle time', async (t) => {
  stallAfter = 2;
  const result = await readAll(new JudgeProxy({ baseUrl: url, exportToken: 'x', timeoutMs: 500 }));
  t.is(result.lines, 2);
  t.truthy(result.error, 'the stream ends with an error, not a clean end');
  t.true(result.ms < 3000, `cut after ${result.ms} ms`);
});
