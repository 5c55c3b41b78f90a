// An agent that prints more than one read's worth (1 MiB per stream) and exits at once: every line
// is in its event log, not only the first megabyte the last look at its output took. Past the run's
// output cap (SVC_RUN_OUTPUT_MAX_MIB) lines are read but no longer kept, and the run says so once.
import test from 'ava';
import { RUN_EVENTS_PAGE_BYTES } from '../../core/event-kinds.ts';
import { runEvents, startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

let svc: TestStack;
test.before(async () => {
  svc = await startTestStack();
});
test.after.always(() => svc?.stop());

test('three megabytes printed just before the agent exits are all recorded, in order', async (t) => {
  // 30,000 lines of 100 bytes; `seq -w` pads each number so every line has the same length.
  const prompt =
    "seq -w 1 30000 | sed 's/$/ " +
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx/'";
  const dispatched = await svc.request('POST', '/runs', { body: { agent: 'shell', prompt } });
  const run = await waitForRunState(svc, dispatched.body.run.id as string, undefined, 120_000);
  t.is(run.state, 'succeeded');
  // Read page by page (GET /runs/{id}/events answers at most RUN_EVENTS_PAGE events at a time).
  const stdout = (await runEvents(svc, run.id))
    .filter((event) => event.stream === 'stdout')
    .map((event) => event.payload.text ?? '');
  t.is(stdout.length, 30_000);
  t.true(stdout[0]!.startsWith('00001 '));
  t.true(stdout[29_999]!.startsWith('30000 '));
});

test('past SVC_RUN_OUTPUT_MAX_MIB the run goes on, its lines are not kept, and it says so once', async (t) => {
  const capped = await startTestStack({ env: { SVC_RUN_OUTPUT_MAX_MIB: '1' } });
  t.teardown(() => capped.stop());
  // 30,000 lines of 100 bytes (3 MB), then a usage report the runtime must still read, then a last line.
  const prompt =
    "seq -w 1 30000 | sed 's/$/ " +
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx/'\n" +
    'echo \'{"type":"svc.usage","costUsd":0.25,"tokensInput":10,"tokensOutput":5}\'\necho the very end';
  const dispatched = await capped.request('POST', '/runs', { body: { agent: 'shell', prompt } });
  const run = await waitForRunState(capped, dispatched.body.run.id as string, undefined, 120_000);
  t.like(run, { state: 'succeeded', costUsd: 0.25 }, 'lines past the cap are still read');
  const events = await runEvents(capped, run.id);
  const stdout = events.filter((event) => event.stream === 'stdout').map((event) => event.payload.text ?? '');
  const keptBytes = stdout.reduce((sum, text) => sum + Buffer.byteLength(text) + 1, 0);
  t.true(keptBytes <= 1048576, `${keptBytes} bytes kept`);
  t.true(stdout.length > 10_000, 'the first mebibyte is kept');
  t.true(stdout[0]!.startsWith('00001 '));
  t.false(stdout.includes('the very end'));
  const truncated = events.filter((event) => event.kind === 'output.truncated');
  t.is(truncated.length, 1);
  t.deepEqual(truncated[0]!.payload, { limitBytes: 1048576, keptBytes });
  const metrics = (await capped.request('GET', '/metrics')).text;
  t.regex(metrics, /^svc_run_output_dropped_lines_total [1-9]\d*/m);
});

test('a page read forward stops after about 4 MiB of long lines; read on, the log comes whole', async (t) => {
  // Twelve lines of 700,000 bytes: 8.4 MB in twelve events.
  const prompt = 'for i in $(seq 1 12); do printf "%s\\n" "$i$(head -c 700000 /dev/zero | tr "\\0" x)"; done';
  const dispatched = await svc.request('POST', '/runs', { body: { agent: 'shell', prompt } });
  const run = await waitForRunState(svc, dispatched.body.run.id as string, undefined, 120_000);
  t.is(run.state, 'succeeded');
  const first = (await svc.request('GET', `/runs/${run.id}/events?follow=0`)).text;
  const lines = first.split('\n').filter(Boolean).length;
  t.true(Buffer.byteLength(first) <= RUN_EVENTS_PAGE_BYTES + 710_000, `${Buffer.byteLength(first)} bytes`);
  t.true(lines < 12, `${lines} events in the first page`);
  const stdout = (await runEvents(svc, run.id)).filter((event) => event.stream === 'stdout');
  t.deepEqual(
    stdout.map((event) => event.payload.text.length),
    Array.from({ length: 12 }, (_, i) => String(i + 1).length + 700_000),
  );
});
