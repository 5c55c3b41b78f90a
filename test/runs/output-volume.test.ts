// An agent that prints more than one read's worth (1 MiB per stream) and exits at once: every line
// is in its event log, not only the first megabyte the last look at its output took.
import test from 'ava';
import { startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

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
  const stdout = (await svc.request('GET', `/runs/${run.id}/events?follow=0`)).text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { stream: string | null; payload: { text?: string } })
    .filter((event) => event.stream === 'stdout')
    .map((event) => event.payload.text ?? '');
  t.is(stdout.length, 30_000);
  t.true(stdout[0]!.startsWith('00001 '));
  t.true(stdout[29_999]!.startsWith('30000 '));
});
