// The start's and the supervise loop's wake-up (sandbox/host/record-watch.ts): a wait is cut
// short the moment a watched record is renamed into place (or was, since the last wait), and only
// by such a file; cancellation ends a wait; an agent writing a lot turns the watch off rather than
// the worker.
import test, { type ExecutionContext } from 'ava';
import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { writeJsonAtomic } from '../../sandbox/host/files.ts';
import { watchForExit, watchForRecords } from '../../sandbox/host/record-watch.ts';

const never = new AbortController().signal;

function watched(t: ExecutionContext) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-exit-watch-'));
  const watch = watchForExit(join(dir, 'exit.json'));
  t.teardown(() => watch.close());
  return { dir, watch };
}

test('a wait ends when the exit record lands, not when another file changes', async (t) => {
  const { dir, watch } = watched(t);
  const started = performance.now();
  const waiting = watch.wait(5000, never);
  await sleep(100);
  writeFileSync(join(dir, 'stdout.log'), 'output');
  await sleep(100);
  writeJsonAtomic(join(dir, 'exit.json'), { exitCode: 0 });
  await waiting;
  const waited = performance.now() - started;
  t.true(waited >= 190, `not woken by another file (${waited} ms)`);
  t.true(waited < 2000, `woken by the exit record (${waited} ms)`);
});

test('a record that landed between two waits ends the next one at once; so does a cancellation', async (t) => {
  const { dir, watch } = watched(t);
  const started = performance.now();
  await watch.wait(150, never);
  t.true(performance.now() - started >= 140, 'with nothing landing, a wait is its time');
  writeJsonAtomic(join(dir, 'exit.json'), { exitCode: 0 });
  await sleep(100);
  const next = performance.now();
  await watch.wait(5000, never);
  t.true(performance.now() - next < 1000);
  // That landing is taken: a loop that goes on waits its time again (it does not spin).
  const after = performance.now();
  await watch.wait(150, never);
  t.true(performance.now() - after >= 140, 'a landing ends one wait, not every later one');

  const other = watched(t);
  const cancel = new AbortController();
  const cancelledAt = performance.now();
  setTimeout(() => cancel.abort(), 100);
  await other.watch.wait(5000, cancel.signal);
  t.true(performance.now() - cancelledAt < 1000);
});

test('a flood of writes to other files closes the watch; the wait is then the poll', async (t) => {
  const { dir, watch } = watched(t);
  for (let i = 0; i < 400; i++) appendFileSync(join(dir, i % 2 ? 'stdout.log' : 'stderr.log'), 'x');
  await sleep(200);
  writeJsonAtomic(join(dir, 'exit.json'), { exitCode: 0 });
  await sleep(100);
  const started = performance.now();
  await watch.wait(300, never);
  t.true(performance.now() - started >= 290, 'no longer woken: the watch closed itself');
});

test('a watch of several records (the start: agent.json or exit.json) wakes for either, not for others', async (t) => {
  for (const record of ['agent.json', 'exit.json']) {
    const dir = mkdtempSync(join(tmpdir(), 'svc-record-watch-'));
    const watch = watchForRecords(dir, ['agent.json', 'exit.json']);
    t.teardown(() => watch.close());
    const started = performance.now();
    const waiting = watch.wait(5000, never);
    await sleep(100);
    writeJsonAtomic(join(dir, 'supervisor.json'), { pid: 1 });
    await sleep(100);
    writeJsonAtomic(join(dir, record), {});
    await waiting;
    const waited = performance.now() - started;
    t.true(waited >= 190, `${record}: not woken by supervisor.json (${waited} ms)`);
    t.true(waited < 2000, `${record}: woken (${waited} ms)`);
  }
});
