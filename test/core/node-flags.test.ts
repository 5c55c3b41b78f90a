import { spawnSync } from 'node:child_process';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { DEFAULT_NODE_FLAGS, nodeFlags } from '../../platform/node-flags.ts';

test("SVC_NODE_FLAGS replaces the default flags; empty keeps Node's own; only options are taken", (t) => {
  t.deepEqual(nodeFlags({}), [DEFAULT_NODE_FLAGS]);
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
const child = (await import('node:child_process')).spawnSync(process.execPath, ['-p', 'process.env.SVC_NODE_FLAGS_APPLIED ?? "none"'], { encoding: 'utf8' });
console.log(JSON.stringify({ pid: process.pid, execArgv: process.execArgv, child: child.stdout.trim() }));`,
  );
  const run = spawnSync(process.execPath, ['--no-warnings', program], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH!, ...env },
  });
  return {
    status: run.status,
    startedPid: run.pid,
    ...(JSON.parse(run.stdout) as { pid: number; execArgv: string[]; child: string }),
  };
}

test('a long-lived command restarts itself once under the flags; its children do not inherit the mark', (t) => {
  const worker = probe('worker');
  t.is(worker.status, 0);
  t.true(worker.execArgv.includes(DEFAULT_NODE_FLAGS));
  t.is(worker.execArgv.filter((flag) => flag === DEFAULT_NODE_FLAGS).length, 1);
  t.is(worker.pid, worker.startedPid, 'replaced in place (execve), not a child');
  t.is(worker.child, 'none');
  const custom = probe('serve', { SVC_NODE_FLAGS: '--max-semi-space-size=2' });
  t.true(custom.execArgv.includes('--max-semi-space-size=2'));
  t.false(custom.execArgv.includes(DEFAULT_NODE_FLAGS));
});

test('a short command, an empty SVC_NODE_FLAGS, or flags Node refuses: it runs as it was started', (t) => {
  t.false(probe('run').execArgv.includes(DEFAULT_NODE_FLAGS));
  t.deepEqual(probe('worker', { SVC_NODE_FLAGS: '' }).execArgv, ['--no-warnings']);
  const refused = probe('worker', { SVC_NODE_FLAGS: '--max-semi-space-size=1 --no-such-node-flag=3' });
  t.is(refused.status, 0);
  t.deepEqual(refused.execArgv, ['--no-warnings']);
});
