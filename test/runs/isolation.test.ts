// The local sandbox as an agent finds it: a minimal read-only system, its workspace at /workspace,
// a home and /tmp of its own, its own PID namespace, the run's egress allowlist, and operator
// binds read-only unless marked rw. A sandbox that cannot start fails the run with sandbox_failed.
// (The attacks on it are in test/security/.)
import test from 'ava';
import { chmodSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runEvents, startTestStack, waitForRunState } from '../support/stack.ts';

const events = (svc: Awaited<ReturnType<typeof startTestStack>>, runId: string) => runEvents(svc, runId);

test('under bubblewrap an agent sees a minimal read-only system, its own workspace, home, PID namespace', async (t) => {
  const cache = mkdtempSync(join(tmpdir(), 'svc-cache-'));
  writeFileSync(join(cache, 'shared.txt'), 'from the operator\n');
  const scratch = mkdtempSync(join(tmpdir(), 'svc-scratch-'));
  // As an operator would: readable (and, for rw, writable) by the sandboxes' unprivileged uids.
  chmodSync(cache, 0o755);
  chmodSync(scratch, 0o1777);
  const svc = await startTestStack({
    env: { SVC_SANDBOX: 'bubblewrap', SVC_SANDBOX_BINDS: `${cache}:/cache,${scratch}:/scratch:rw` },
  });
  t.teardown(() => svc.stop());
  const escape = `/usr/svc-escape-${process.pid}`;
  const prompt = [
    `touch ${escape} 2>&1 || true`,
    'echo processes=$(ls /proc | grep -c "^[0-9]")',
    'echo ok > inside.txt && cat inside.txt',
    'echo home=$HOME tmp=$TMPDIR pwd=$(pwd) user=$(id -un)',
    'echo top=$(ls / | tr "\\n" " ")',
    'echo cache=$(cat /cache/shared.txt); touch /cache/x 2>/dev/null && echo cache_writable || echo cache_readonly',
    'touch /scratch/made && echo scratch_writable',
    'touch $HOME/h $TMPDIR/t && echo home_tmp_writable',
  ].join('\n');
  const { body } = await svc.request('POST', '/runs', { body: { agent: 'shell', prompt } });
  const run = await waitForRunState(svc, body.run.id);
  t.is(run.state, 'succeeded');
  const log = await events(svc, run.id);
  t.is(log.find((event) => event.kind === 'sandbox.started')?.payload.isolation, 'bubblewrap');
  const out = log.filter((event) => event.stream === 'stdout').map((event) => event.payload.text as string);
  t.false(existsSync(escape), 'the system is read-only to the agent');
  t.true(out.some((line) => /Read-only file system/.test(line)));
  t.true(
    Number(out.find((line) => line.startsWith('processes='))!.slice(10)) < 10,
    "a fresh PID namespace: only the sandbox's few processes",
  );
  t.true(out.includes('ok'), 'the workspace is writable');
  t.true(out.includes('home=/home/agent tmp=/tmp pwd=/workspace user=agent'));
  const top = out
    .find((line) => line.startsWith('top='))!
    .slice(4)
    .trim()
    .split(' ');
  t.deepEqual(
    top
      .filter(
        (entry) =>
          ![
            'bin',
            'lib',
            'lib32',
            'lib64',
            'libx32',
            'sbin',
            'usr',
            'etc',
            'dev',
            'proc',
            'home',
            'tmp',
            'run',
            'workspace',
            'cache',
            'scratch',
          ].includes(entry),
      )
      .filter((entry) => !process.execPath.startsWith(`/${entry}/`)),
    [],
    `only the minimal system at the root: ${top.join(' ')}`,
  );
  t.true(out.includes('cache=from the operator'));
  t.true(out.includes('cache_readonly'), 'an operator bind is read-only by default');
  t.true(out.includes('scratch_writable'), 'and writable when marked rw');
  t.true(out.includes('home_tmp_writable'));
  t.true(existsSync(join(scratch, 'made')));
});

test('a sandbox that cannot start fails the run with sandbox_failed', async (t) => {
  // A bind mount whose source does not exist: bubblewrap itself refuses to start the sandbox.
  const svc = await startTestStack({
    env: { SVC_SANDBOX: 'bubblewrap', SVC_SANDBOX_BINDS: '/nonexistent/svc-cache:/cache' },
  });
  t.teardown(() => svc.stop());
  const { body } = await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo never' } });
  const run = await waitForRunState(svc, body.run.id);
  t.like(run, { state: 'failed', failureReason: 'sandbox_failed' });
  t.true((await events(svc, run.id)).some((event) => event.stream === 'stderr' && /^bwrap: /.test(event.payload.text)));
});
