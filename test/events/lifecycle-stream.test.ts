// GET /events/stream and GET /events: a run's transitions arrive in order on concurrent streams
// (pre_reap when finalize begins, or with the end of a run with nothing to reap); follow=0 closes
// at once; capacity is enforced and freed on disconnect; shutdown ends streams cleanly; and two
// API processes on one PostgreSQL both see every transition (LISTEN/NOTIFY).
import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresOrSkip } from '../support/env.ts';
import { spawnSvc, waitForOutput } from '../support/processes.ts';
import { runEvents, startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';

interface Line {
  runId: string;
  hook: string;
  state: string | null;
  ts: string;
}

/** Opens a lifecycle stream and collects its lines until `until` says enough (or the stream ends). */
async function openStream(url: string, token: string) {
  const controller = new AbortController();
  const response = await fetch(`${url}/events/stream`, {
    headers: { authorization: `Bearer ${token}` },
    signal: controller.signal,
  });
  const lines: Line[] = [];
  let blankLines = 0;
  let ended = false;
  const reading = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let newline;
        while ((newline = buffer.indexOf('\n')) >= 0) {
          const text = buffer.slice(0, newline).trim();
          buffer = buffer.slice(newline + 1);
          if (text) lines.push(JSON.parse(text));
          else blankLines++;
        }
      }
      ended = true;
    } catch {
      // aborted by us
    }
  })();
  const until = async (done: (seen: Line[]) => boolean, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!done(lines) && Date.now() < deadline && !ended) await new Promise((resolve) => setTimeout(resolve, 50));
    return lines;
  };
  return {
    response,
    lines,
    until,
    close: () => controller.abort(),
    reading,
    ended: () => ended,
    blankLines: () => blankLines,
  };
}

const transitionsOf = (lines: Line[], runId: string) =>
  lines.filter((line) => line.runId === runId).map((line) => [line.hook, line.state]);
// A run with no project has nothing to reap: its pre_reap comes with its end, in the state it had.
const EXPECTED = [
  ['run_dispatched', 'queued'],
  ['run_started', 'running'],
  ['pre_reap', 'running'],
  ['post_reap', 'succeeded'],
];

test.serial(
  "a run's transitions arrive in order on two concurrent streams; GET /events lists them; follow=0 closes at once",
  async (t) => {
    const svc = await startTestStack();
    t.teardown(() => svc.stop());
    const first = await openStream(svc.url, svc.token);
    const second = await openStream(svc.url, svc.token);
    t.is(first.response.status, 200);
    t.regex(first.response.headers.get('content-type') ?? '', /application\/x-ndjson/);
    const runId = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo hi' } })).body.run.id;
    const finished = (lines: Line[]) => lines.some((line) => line.runId === runId && line.hook === 'post_reap');
    t.deepEqual(transitionsOf(await first.until(finished), runId), EXPECTED);
    t.deepEqual(transitionsOf(await second.until(finished), runId), EXPECTED);
    t.true(first.lines.every((line) => !Number.isNaN(Date.parse(line.ts))));
    first.close();
    second.close();

    const listed = await svc.request('GET', '/events?limit=10');
    t.deepEqual(
      listed.body.events.filter((event: Line) => event.runId === runId).map((event: Line) => [event.hook, event.state]),
      EXPECTED,
    );
    const after = await svc.request('GET', `/events?since=${listed.body.events.at(-1).id}`);
    t.deepEqual(after.body.events, []);

    const started = Date.now();
    const probe = await svc.request('GET', '/events/stream?follow=0');
    t.is(probe.status, 200);
    t.is(probe.text, '');
    t.true(Date.now() - started < 2000);
    t.is((await svc.request('GET', '/events/stream', { token: null })).status, 401);
  },
);

test.serial(
  'pre_reap arrives when finalize begins, while the run still runs, before its push and its end',
  async (t) => {
    const github = new GitHubStandIn();
    const forge = new PullRequestsStandIn();
    await forge.start();
    t.teardown(() => forge.stop());
    github.createRepo('acme', 'reaped', { files: { 'src/app.txt': 'one\n' } });
    const svc = await startTestStack({ env: { SVC_GIT_TOKEN: 'ghp_test', SVC_GITHUB_API_URL: forge.url } });
    t.teardown(() => svc.stop());
    const project = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/reaped' } }))
      .body.project.id;
    const stream = await openStream(svc.url, svc.token);
    const prompt = "printf 'two\\n' >> src/app.txt && git commit -qam 'more'";
    const runId = (await svc.request('POST', '/runs', { body: { agent: 'shell', project, prompt } })).body.run.id;
    const lines = await stream.until((seen) => seen.some((line) => line.runId === runId && line.hook === 'post_reap'));
    stream.close();
    t.deepEqual(transitionsOf(lines, runId), [
      ['run_dispatched', 'queued'],
      ['run_started', 'running'],
      ['pre_reap', 'running'],
      ['branch_pushed', null],
      ['post_reap', 'succeeded'],
    ]);
    // Before branch_pushed: written with finalize's first step, not with the run's end.
    const kinds = (await runEvents(svc, runId)).map((event) => event.kind);
    t.true(kinds.includes('finalize.intent_parked'), kinds.join(', '));
  },
);

test.serial('a run cancelled while it runs: pre_reap (running), then post_reap (cancelled)', async (t) => {
  const svc = await startTestStack();
  t.teardown(() => svc.stop());
  const stream = await openStream(svc.url, svc.token);
  const runId = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'sleep 300' } })).body.run.id;
  await waitForRunState(svc, runId, ['running']);
  await svc.request('POST', `/runs/${runId}/cancel`, { body: {} });
  const lines = await stream.until((seen) => seen.some((line) => line.runId === runId && line.hook === 'post_reap'));
  stream.close();
  t.deepEqual(transitionsOf(lines, runId).slice(-2), [
    ['pre_reap', 'running'],
    ['post_reap', 'cancelled'],
  ]);
});

test.serial('on SQLite, a commit wakes the streams through the write-ahead log, not the poll', async (t) => {
  // The safety poll is ten minutes away: lines that arrive came by the log's watch.
  const svc = await startTestStack({ env: { SVC_EVENT_STREAM_POLL_MS: '600000' } });
  t.teardown(() => svc.stop());
  const stream = await openStream(svc.url, svc.token);
  const runId = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo hi' } })).body.run.id;
  await waitForRunState(svc, runId);
  const lines = await stream.until((seen) => seen.some((line) => line.runId === runId && line.hook === 'post_reap'));
  t.deepEqual(transitionsOf(lines, runId), EXPECTED);
  stream.close();
});

test.serial(
  'a stream starts at now: transitions written while no stream was open never arrive, and every line is JSON',
  async (t) => {
    const svc = await startTestStack({ env: { SVC_EVENT_STREAM_KEEPALIVE_MS: '1000' } });
    t.teardown(() => svc.stop());
    // Before boot's first stream, and between streams: nobody listens.
    const before = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo early' } })).body.run.id;
    await waitForRunState(svc, before);
    const warmup = await openStream(svc.url, svc.token);
    warmup.close();
    await warmup.reading;
    const between = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo between' } })).body.run
      .id;
    await waitForRunState(svc, between);
    await new Promise((resolve) => setTimeout(resolve, 3000));

    const stream = await openStream(svc.url, svc.token);
    t.is(stream.response.status, 200, 'the headers arrive before any line');
    const after = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo after' } })).body.run.id;
    const finished = (lines: Line[]) => lines.some((line) => line.runId === after && line.hook === 'post_reap');
    const lines = await stream.until(finished);
    t.deepEqual(transitionsOf(lines, after), EXPECTED);
    t.deepEqual(
      lines.filter((line) => line.runId !== after),
      [],
      'nothing from before the stream connected',
    );
    await new Promise((resolve) => setTimeout(resolve, 2500));
    t.is(stream.blankLines(), 0, 'no blank keep-alive lines, even idle past the keep-alive interval');
    stream.close();
  },
);

test.serial(
  'capacity: one stream over the limit is 503 event_stream_capacity with Retry-After; a disconnect frees its place; ' +
    'shutdown ends streams',
  async (t) => {
    const svc: TestStack = await startTestStack({ worker: false, env: { SVC_EVENT_STREAM_MAX: '2' } });
    let stopped = false;
    t.teardown(() => (stopped ? undefined : svc.stop()));
    // Two streams pipelined on one connection, then the client goes: both places come back (the
    // second response, queued behind the first, never closes by itself).
    const { hostname, port } = new URL(svc.url);
    const pipelined = connect(Number(port), hostname);
    const get = `GET /events/stream HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${svc.token}\r\n\r\n`;
    pipelined.write(get + get);
    await new Promise((resolve) => pipelined.once('data', resolve));
    await new Promise((resolve) => setTimeout(resolve, 300));
    t.is((await svc.request('GET', '/events/stream')).status, 503, 'both pipelined streams hold a place');
    pipelined.destroy();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const a = await openStream(svc.url, svc.token);
    const b = await openStream(svc.url, svc.token);
    const refused = await svc.request('GET', '/events/stream');
    t.is(refused.status, 503);
    t.is(refused.body.error.code, 'event_stream_capacity');
    t.is(refused.headers.get('retry-after'), '5');
    // HEAD has no body to hold: it answers at once, and never takes a place.
    const head = await fetch(`${svc.url}/events/stream`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${svc.token}` },
      signal: AbortSignal.timeout(5000),
    });
    t.is(head.status, 200);
    t.is(head.headers.get('content-type'), 'application/x-ndjson');
    a.close();
    await a.reading;
    let reopened;
    for (let attempt = 0; attempt < 40; attempt++) {
      reopened = await openStream(svc.url, svc.token);
      if (reopened.response.status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    t.is(reopened!.response.status, 200, 'the closed stream gave its place back');
    await svc.stop();
    stopped = true;
    await Promise.all([b.reading, reopened!.reading]);
    t.true(b.ended() && reopened!.ended(), 'streams end cleanly when the server shuts down');
  },
);

test.serial('two API processes on one PostgreSQL both see every transition', async (t) => {
  if (!postgresOrSkip(t, 'postgresql')) return;
  const svc = await startTestStack({ database: 'postgresql' });
  t.teardown(() => svc.stop());
  // A second API process (no worker) on the same database and Temporal task queue, with a data
  // directory of its own: one `svc serve` holds a data directory.
  const otherData = mkdtempSync(join(tmpdir(), 'svc-other-api-'));
  t.teardown(() => rmSync(otherData, { recursive: true, force: true }));
  const other = spawnSvc(['serve', '--no-worker'], {
    ...process.env,
    DATABASE_URL: svc.config.databaseUrl,
    TEMPORAL_ADDRESS: svc.config.temporalAddress,
    SVC_TASK_QUEUE: svc.config.taskQueue,
    SVC_API_TOKEN: svc.token,
    SVC_PORT: '0',
    SVC_DATA_DIR: otherData,
  });
  t.teardown(() => other.child.kill('SIGKILL'));
  const otherUrl = (await waitForOutput(other, /API: +(http:\/\/\S+)/, 60_000))[1]!;
  const here = await openStream(svc.url, svc.token);
  const there = await openStream(otherUrl, svc.token);
  const runId = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo across' } })).body.run.id;
  await waitForRunState(svc, runId);
  const finished = (lines: Line[]) => lines.some((line) => line.runId === runId && line.hook === 'post_reap');
  t.deepEqual(
    transitionsOf(await there.until(finished), runId),
    EXPECTED,
    'the process that neither dispatched nor ran it',
  );
  t.deepEqual(transitionsOf(await here.until(finished), runId), EXPECTED);
  here.close();
  there.close();
});
