// The worker's spawner (sandbox/host/spawner.ts): detached processes started by a small
// helper, with the caller's environment and directory, in sessions of their own; a helper that
// dies is replaced.
import test from 'ava';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnDetached, stopSpawner } from '../../sandbox/host/spawner.ts';
import { waitFor } from '../support/processes.ts';

test('a detached process gets the caller environment and directory, and a session of its own', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-spawner-'));
  const out = join(dir, 'out');
  process.env.SVC_SPAWNER_PROBE = 'from-the-caller';
  const pid = await spawnDetached(['bash', '-c', `echo "$SVC_SPAWNER_PROBE $PWD $$ $(ps -o sid= -p $$)" > ${out}`]);
  t.true(pid > 0);
  const line = await waitFor(
    async () => existsSync(out) && readFileSync(out, 'utf8').endsWith('\n') && readFileSync(out, 'utf8').trim(),
    'the process to write',
  );
  const [probe, cwd, ownPid, sid] = line.split(/\s+/);
  t.is(probe, 'from-the-caller');
  t.is(cwd, process.cwd());
  t.is(Number(ownPid), pid, 'the pid answered is the process started');
  t.is(Number(sid), pid, 'its own session: it outlives its starter');
});

test('one spawner serves many requests, in order', async (t) => {
  const pids = await Promise.all(Array.from({ length: 20 }, () => spawnDetached(['true'])));
  t.is(new Set(pids).size, 20);
  t.true(pids.every((pid) => pid > 0));
});

test('a helper that is gone is replaced, and no request is lost', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-spawner-'));
  await spawnDetached(['true']);
  stopSpawner();
  const pid = await spawnDetached(['bash', '-c', `echo again > ${join(dir, 'out')}`]);
  t.true(pid > 0);
  // The file exists as soon as the shell opens it: wait for what it writes.
  const out = join(dir, 'out');
  await waitFor(async () => existsSync(out) && readFileSync(out, 'utf8') === 'again\n', 'the process to write');
  t.pass();
});
