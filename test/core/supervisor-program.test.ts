// The supervisor as plain JavaScript (sandbox/host/supervisor-program.ts): its module graph
// stripped of types into a fresh private directory, loadable by a Node that strips nothing, its
// lazy imports pointing at the checkout's TypeScript; never a copy it did not write; a directory
// that is not svc's own falls back to the TypeScript entry.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import {
  prepareSupervisorProgram,
  pruneStalePrograms,
  supervisorProgram,
} from '../../sandbox/host/supervisor-program.ts';

const TYPESCRIPT_ENTRY = resolve('sandbox/host/supervisor.ts');

test.serial('the supervisor runs from a fresh stripped copy that needs no TypeScript', (t) => {
  t.is(supervisorProgram(), TYPESCRIPT_ENTRY, 'before it is prepared: the TypeScript file');
  const cache = join(mkdtempSync(join(tmpdir(), 'svc-data-')), 'programs');
  const entry = prepareSupervisorProgram(cache);
  t.true(entry.startsWith(cache) && entry.endsWith('sandbox/host/supervisor.mjs'), entry);
  t.is(supervisorProgram(), entry);
  t.not(prepareSupervisorProgram(cache), entry, 'each start writes its own copy, never reusing one');
  t.regex(readFileSync(entry, 'utf8'), /from "\.\/supervision\.mjs"/);
  const code = readFileSync(join(dirname(entry), 'supervision.mjs'), 'utf8');
  t.regex(code, /from "\.\.\/network\/sandbox-network\.mjs"/);
  const backends = readFileSync(join(dirname(entry), 'supervised-backends.mjs'), 'utf8');
  t.regex(backends, new RegExp(`import\\("file://${resolve('sandbox/backends/container/container-runner.ts')}"\\)`));
  // A Node that strips no types gets through every import to the supervisor's own usage check.
  const run = spawnSync(process.execPath, ['--no-experimental-strip-types', entry], { encoding: 'utf8' });
  t.is(run.status, 2, run.stderr);
  t.regex(run.stderr, /usage: supervisor\.ts <sandbox-dir>/);
  // Nor does it load Node's fetch client (an ESM import of node:http would, ~30 ms of every start).
  const loaded =
    'process.on("exit", () => process.stderr.write(`undici=${process.moduleLoadList.some((m) => ' +
    'm.includes("undici"))}`))';
  const probed = spawnSync(
    process.execPath,
    ['--no-experimental-strip-types', '--import', `data:text/javascript,${encodeURIComponent(loaded)}`, entry],
    { encoding: 'utf8' },
  );
  t.regex(probed.stderr, /undici=false$/);
});

test.serial('a programs directory that is not svc own (a symlink, writable by others) is not used', (t) => {
  const data = mkdtempSync(join(tmpdir(), 'svc-data-'));
  const elsewhere = mkdtempSync(join(tmpdir(), 'svc-elsewhere-'));
  symlinkSync(elsewhere, join(data, 'linked'));
  t.is(prepareSupervisorProgram(join(data, 'linked')), TYPESCRIPT_ENTRY);
  const open = join(data, 'open');
  mkdirSync(open);
  chmodSync(open, 0o777);
  t.is(prepareSupervisorProgram(open), TYPESCRIPT_ENTRY);
});

test.serial("what stopped workers left in programs/ goes a day later; a live worker's copy stays", (t) => {
  const data = mkdtempSync(join(tmpdir(), 'svc-data-'));
  const cache = join(data, 'programs');
  const live = prepareSupervisorProgram(cache);
  const day = 24 * 3600_000;
  mkdirSync(join(cache, 'workflow-bundle-left'));
  mkdirSync(join(cache, 'supervisor-2147483646-5-left')); // a worker that is gone (no such pid)
  mkdirSync(join(cache, `supervisor-${process.pid}-1-left`)); // this pid, but another process's start
  mkdirSync(join(cache, 'unrelated'));
  t.deepEqual(pruneStalePrograms(cache), [], 'nothing is a day old yet');
  const removed = pruneStalePrograms(cache, Date.now() + day + 1000).sort();
  t.deepEqual(
    removed,
    ['supervisor-2147483646-5-left', `supervisor-${process.pid}-1-left`, 'workflow-bundle-left'].sort(),
  );
  t.true(readdirSync(cache).includes(live.split('/').at(-4)!), 'the copy this live worker starts from stays');
  t.is(supervisorProgram(join(data, 'sandboxes', 'run_x')), live);
  rmSync(join(cache, live.split('/').at(-4)!), { recursive: true });
  t.is(supervisorProgram(join(data, 'sandboxes', 'run_x')), TYPESCRIPT_ENTRY, 'a copy gone: the TypeScript entry');
});

test.serial("each worker's sandboxes start from its own copy: removing one data directory leaves the others", (t) => {
  const first = mkdtempSync(join(tmpdir(), 'svc-data-'));
  const second = mkdtempSync(join(tmpdir(), 'svc-data-'));
  const firstCopy = prepareSupervisorProgram(join(first, 'programs'));
  const secondCopy = prepareSupervisorProgram(join(second, 'programs'));
  t.is(supervisorProgram(join(first, 'sandboxes', 'run_a', 'finalize')), firstCopy);
  t.is(supervisorProgram(join(second, 'sandboxes', 'run_b')), secondCopy);
  rmSync(second, { recursive: true });
  t.is(supervisorProgram(join(first, 'sandboxes', 'run_a')), firstCopy, "another worker's data removed: no matter");
  t.is(supervisorProgram(join(tmpdir(), 'elsewhere', 'run_c')), TYPESCRIPT_ENTRY);
});
