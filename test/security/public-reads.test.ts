// Attack: stall a public instance without a credential. Spectators read event logs a page at a
// time, each client within a request rate and a number of requests in progress (429 rate_limited
// with Retry-After past them, per client: its address, or what a trusted proxy says it was), and a
// large read, an operator's whole log included, shares the event loop with every other request.
import test from 'ava';
import { RUN_EVENTS_PAGE } from '../../core/event-kinds.ts';
import { request as httpRequest } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Context } from 'koa';
import { MAX_SPECTATORS_IN_FLIGHT, SpectatorLimits } from '../../api/spectator-limits.ts';
import { seedBigRun, type BigRun } from '../support/big-run.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

const RATE = { ratePerSecond: 1, burst: 4 };
let svc: TestStack;
let big: BigRun;
test.before(async () => {
  svc = await startTestStack({
    worker: false,
    env: {
      SVC_AUTH: 'public',
      SVC_PUBLIC_ALLOWLIST: 'acme',
      SVC_PUBLIC_RATE_PER_SECOND: String(RATE.ratePerSecond),
      SVC_PUBLIC_RATE_BURST: String(RATE.burst),
    },
  });
  big = await seedBigRun(svc.stack.readModel, { owner: 'acme', events: 40_000, lineBytes: 300 });
});
test.after.always(() => svc?.stop());

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A GET from a loopback address of the caller's choosing: each address is another client to svc. */
function get(path: string, from: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${svc.url}${path}`, { localAddress: from, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode!, headers: response.headers, text: Buffer.concat(chunks).toString() }),
      );
      response.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** A GET whose body is only counted as it arrives: the test holds no large string of its own. */
function drain(path: string, from: string, headers: Record<string, string>): Promise<{ lines: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${svc.url}${path}`, { localAddress: from, headers }, (response) => {
      let lines = 0;
      let bytes = 0;
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines += 1;
      });
      response.on('end', () => resolve({ lines, bytes }));
      response.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const seqs = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { seq: number }).seq);

test.serial('a spectator reads a large log a page at a time; the operator reads it whole', async (t) => {
  const path = `/runs/${big.runId}/events?follow=0`;
  const first = seqs((await get(path, '127.0.0.11')).text);
  t.is(first.length, 1000, 'one page of 1000 events');
  t.deepEqual([first[0], first.at(-1)], [1, 1000]);
  const asked = seqs((await get(`${path}&limit=${RUN_EVENTS_PAGE}`, '127.0.0.11')).text);
  t.is(asked.length, 1000, 'a larger limit is still one page');
  const next = seqs((await get(`${path}&since=1000`, '127.0.0.11')).text);
  t.deepEqual([next.length, next[0], next.at(-1)], [1000, 1001, 2000], 'the next page: since=<last seq>');
  // The operator's read is a larger page; read on with since, the log comes whole.
  const operator: number[] = [];
  for (;;) {
    const since = operator.at(-1) ?? 0;
    const page = seqs(
      (await get(`${path}&since=${since}`, '127.0.0.11', { authorization: `Bearer ${svc.token}` })).text,
    );
    t.true(page.length <= RUN_EVENTS_PAGE, `a page of ${page.length} events`);
    operator.push(...page);
    if (page.length === 0) break;
  }
  t.deepEqual(
    operator,
    Array.from({ length: big.events }, (_, i) => i + 1),
  );
});

test.serial('a spectator past its rate gets 429 rate_limited with Retry-After; other clients do not', async (t) => {
  const statuses: number[] = [];
  let refused: Answer | undefined;
  const started = performance.now();
  for (let i = 0; i < 12 && !refused; i++) {
    const answer = await get(`/runs/${big.runId}`, '127.0.0.12');
    statuses.push(answer.status);
    if (answer.status === 429) refused = answer;
  }
  const seconds = (performance.now() - started) / 1000;
  t.truthy(refused, `no 429 in ${statuses.length} requests over ${seconds.toFixed(1)} s: ${statuses.join(' ')}`);
  t.true(statuses.length <= RATE.burst + Math.ceil(seconds * RATE.ratePerSecond) + 1, statuses.join(' '));
  t.deepEqual(JSON.parse(refused!.text).error.code, 'rate_limited');
  t.regex(String(refused!.headers['retry-after']), /^[1-9]\d*$/);
  t.is((await get(`/runs/${big.runId}`, '127.0.0.13')).status, 200, 'another client is not limited');
  const operator = await get(`/runs/${big.runId}`, '127.0.0.12', { authorization: `Bearer ${svc.token}` });
  t.is(operator.status, 200, 'the operator is not limited');
  t.is((await get('/healthz', '127.0.0.12')).status, 200, 'liveness is not limited');
});

test.serial('X-Forwarded-For names no client unless it comes from a trusted proxy', async (t) => {
  // svc trusts no proxy here: a forged header does not escape the limit of the address behind it.
  const statuses: number[] = [];
  for (let i = 0; i < 12 && !statuses.includes(429); i++)
    statuses.push((await get(`/runs/${big.runId}`, '127.0.0.14', { 'x-forwarded-for': `10.9.0.${i}` })).status);
  t.true(statuses.includes(429), statuses.join(' '));
});

test.serial('a large read shares the event loop: it never holds it for long stretches', async (t) => {
  // The operator's read of the whole log (about 15 MB, GET /runs/{id}/log) in this process, against the longest
  // stretch the loop was held meanwhile: svc's read works in slices, so /healthz is served between them.
  const delay = monitorEventLoopDelay({ resolution: 5 });
  const started = performance.now();
  delay.enable();
  let done = false;
  const health = (async () => {
    let answered = 0;
    while (!done) if ((await get('/healthz', '127.0.0.15')).status === 200) answered += 1;
    return answered;
  })();
  const read = await drain(`/runs/${big.runId}/log`, '127.0.0.15', {
    authorization: `Bearer ${svc.token}`,
  });
  done = true;
  const readMs = performance.now() - started;
  delay.disable();
  const answered = await health;
  t.is(read.lines, big.events);
  const longestMs = delay.max / 1e6;
  t.log(
    `read ${(read.bytes / 2 ** 20).toFixed(1)} MiB in ${readMs.toFixed(0)} ms; ` +
      `longest loop stall ${longestMs.toFixed(1)} ms; ${answered} /healthz answered meanwhile`,
  );
  // Unsliced, the loop was held for a third of the read and more at a time.
  t.true(longestMs < readMs / 5, `the loop was held ${longestMs.toFixed(0)} ms of a ${readMs.toFixed(0)} ms read`);
});

/** A request's context as the limiter sees it: its peer, its headers, its response's close. */
function fakeContext(remoteAddress: string, forwardedFor = '') {
  const closers: (() => void)[] = [];
  const ctx = {
    req: { socket: { remoteAddress } },
    get: (name: string) => (name.toLowerCase() === 'x-forwarded-for' ? forwardedFor : ''),
    res: { once: (_event: string, listener: () => void) => closers.push(listener) },
  } as unknown as Context;
  return { ctx, close: () => closers.splice(0).forEach((closer) => closer()) };
}

test('the limiter: a bucket per client, refilled over time, with Retry-After until the next request', (t) => {
  let now = 0;
  const limits = new SpectatorLimits({ ratePerSecond: 2, burst: 3, maxInFlight: 100, trustedProxies: [] }, () => now);
  for (let i = 0; i < 3; i++) limits.admit(fakeContext('192.0.2.1').ctx);
  const refused = t.throws(() => limits.admit(fakeContext('192.0.2.1').ctx)) as unknown as {
    status: number;
    code: string;
    headers: Record<string, string>;
  };
  t.deepEqual([refused.status, refused.code, refused.headers['Retry-After']], [429, 'rate_limited', '1']);
  t.notThrows(() => limits.admit(fakeContext('192.0.2.2').ctx), 'another client has its own bucket');
  now += 500;
  t.notThrows(() => limits.admit(fakeContext('192.0.2.1').ctx), 'half a second refills one request at 2/s');
  t.throws(() => limits.admit(fakeContext('192.0.2.1').ctx));
});

test('the limiter: requests in progress are capped per client and given back when they close', (t) => {
  const limits = new SpectatorLimits({ ratePerSecond: 100, burst: 100, maxInFlight: 2, trustedProxies: [] });
  const first = fakeContext('192.0.2.1');
  limits.admit(first.ctx);
  limits.admit(fakeContext('192.0.2.1').ctx);
  const refused = t.throws(() => limits.admit(fakeContext('192.0.2.1').ctx)) as unknown as { code: string };
  t.is(refused.code, 'rate_limited');
  first.close();
  t.notThrows(() => limits.admit(fakeContext('192.0.2.1').ctx), 'a closed response gives its place back');
});

test('the limiter: a client is its address, its IPv6 /64, or what a trusted proxy saw', (t) => {
  const limits = new SpectatorLimits({ ratePerSecond: 1, burst: 1, maxInFlight: 1, trustedProxies: ['10.0.0.0/8'] });
  t.is(limits.clientOf('::ffff:192.0.2.7', ''), '192.0.2.7');
  t.is(limits.clientOf('2001:db8:1:2:aaaa::1', ''), '2001:db8:1:2::/64');
  t.is(limits.clientOf('2001:db8::1', ''), '2001:db8:0:0::/64');
  t.is(limits.clientOf('192.0.2.7', '203.0.113.5'), '192.0.2.7', 'an untrusted peer forwards nothing');
  t.is(limits.clientOf('10.1.2.3', '198.51.100.1, 203.0.113.5, 10.4.4.4'), '203.0.113.5');
  t.is(limits.clientOf('10.1.2.3', 'garbage'), '10.1.2.3', 'no address: the proxy itself');
  t.is(limits.clientOf('10.1.2.3', ''), '10.1.2.3');
  // The port some proxies write after the address is not a different client, nor no client.
  t.is(limits.clientOf('10.1.2.3', '203.0.113.5:5678'), '203.0.113.5');
  t.is(limits.clientOf('10.1.2.3', '[2001:db8:1:2::9]:443'), '2001:db8:1:2::/64');
});

test('the limiter: many addresses together still hold at most its process-wide share of requests', (t) => {
  const limits = new SpectatorLimits({ ratePerSecond: 100, burst: 100, maxInFlight: 6, trustedProxies: [] });
  const held = [];
  // An IPv6 /48 is thousands of /64 clients: each within its own limit, together past the process's.
  for (let i = 0; i < MAX_SPECTATORS_IN_FLIGHT; i++) {
    const request = fakeContext(`2001:db8:1:${i.toString(16)}::1`);
    limits.admit(request.ctx);
    held.push(request);
  }
  const refused = t.throws(() => limits.admit(fakeContext('2001:db8:1:ffff::1').ctx)) as unknown as { code: string };
  t.is(refused.code, 'rate_limited');
  held.pop()!.close();
  t.notThrows(() => limits.admit(fakeContext('2001:db8:1:ffff::1').ctx), 'a closed request gives its place back');
});
