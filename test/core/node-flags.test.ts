import { spawnSync } from 'node:child_process';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { DEFAULT_MALLOC_ARENA_MAX, DEFAULT_NODE_FLAGS, nodeFlags } from '../../platform/node-flags.ts';

test("SVC_NODE_FLAGS replaces the default flags; empty keeps Node's own; only options are taken", (t) => {
  t.deepEqual(nodeFlags({}), DEFAULT_NODE_FLAGS.split(' '));
  t.deepEqual(nodeFlags({ SVC_NODE_FLAGS: '' }), []);
  t.deepEqual(nodeFlags({ SVC_NODE_FLAGS: ' --max-semi-space-size=4  --max-old-space-size=512 x' }), [
    '--max-semi-space-size=4',
    '--max-old-space-size=512',
  ]);
});

/** Runs a program that applies svc's flags for `command` and says what it runs under. */
function probe(command: string, env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-flags-'));
  const program = join(dir, 'probe.ts');
  writeFileSync(
    program,
    `import { applyNodeFlags } from ${JSON.stringify(join(process.cwd(), 'platform', 'node-flags.ts'))};
applyNodeFlags(${JSON.stringify(command)});
const child = (await import('node:child_process')).spawnSync(
  process.execPath,
  ['-p', 'process.env.SVC_NODE_FLAGS_APPLIED ?? "none"'],
  { encoding: 'utf8' },
);
const arenas = process.env.MALLOC_ARENA_MAX ?? null;
console.log(JSON.stringify({ pid: process.pid, execArgv: process.execArgv, child: child.stdout.trim(), arenas }));`,
  );
  const run = spawnSync(process.execPath, ['--no-warnings', program], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH!, ...env },
  });
  return {
    status: run.status,
    startedPid: run.pid,
    ...(JSON.parse(run.stdout) as { pid: number; execArgv: string[]; child: string; arenas: string | null }),
  };
}

test('a long-lived command restarts itself once under the flags; its children do not inherit the mark', (t) => {
  const worker = probe('worker');
  t.is(worker.status, 0);
  for (const flag of DEFAULT_NODE_FLAGS.split(' ')) {
    t.true(worker.execArgv.includes(flag));
    t.is(worker.execArgv.filter((given) => given === flag).length, 1);
  }
  t.is(worker.pid, worker.startedPid, 'replaced in place (execve), not a child');
  t.is(worker.child, 'none');
  t.is(worker.arenas, DEFAULT_MALLOC_ARENA_MAX, "glibc's arenas capped with the restart");
  const custom = probe('serve', { SVC_NODE_FLAGS: '--max-semi-space-size=2', MALLOC_ARENA_MAX: '4' });
  t.true(custom.execArgv.includes('--max-semi-space-size=2'));
  t.false(custom.execArgv.includes('--optimize-for-size'));
  t.is(custom.arenas, '4', "an operator's MALLOC_ARENA_MAX stands");
});

test('a short command, an empty SVC_NODE_FLAGS, or flags Node refuses: it runs as it was started', (t) => {
  const short = probe('run');
  t.deepEqual(short.execArgv, ['--no-warnings']);
  t.is(short.arenas, null);
  t.deepEqual(probe('worker', { SVC_NODE_FLAGS: '' }).execArgv, ['--no-warnings']);
  const refused = probe('worker', { SVC_NODE_FLAGS: '--max-semi-space-size=1 --no-such-node-flag=3' });
  t.is(refused.status, 0);
  t.deepEqual(refused.execArgv, ['--no-warnings']);
});
