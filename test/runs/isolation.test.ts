// The local sandbox isolates agents with bubblewrap when the machine allows it: a read-only host,
// its own PID namespace, and only the workspace (and a per-run home) writable. A sandbox that
// cannot start fails the run with sandbox_failed.
import test from 'ava';
import { existsSync } from 'node:fs';
import { bubblewrapWorks } from '../../activities/sandbox/isolation.ts';
import { startTestStack, waitForRunState } from '../support/stack.ts';

const events = async (svc: Awaited<ReturnType<typeof startTestStack>>, runId: string) =>
  (await svc.request('GET', `/runs/${runId}/events?follow=0`)).text.split('\n').filter(Boolean).map((line) => JSON.parse(line));

test('under bubblewrap the agent sees a read-only host and its own PID namespace; the run says so', async (t) => {
  if (!bubblewrapWorks()) {
    // The CI machine installs bubblewrap (scripts/test); without it svc runs agents as plain processes.
    t.log('bubblewrap cannot run here: agents run as plain processes');
    const svc = await startTestStack({ worker: true, env: { SVC_SANDBOX: 'auto' } });
    t.teardown(() => svc.stop());
    const { body } = await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'true' } });
    await waitForRunState(svc, body.run.id);
    t.is((await events(svc, body.run.id)).find((event) => event.kind === 'sandbox.started').payload.isolation, 'process');
    return;
  }
  const svc = await startTestStack({ env: { SVC_SANDBOX: 'bubblewrap' } });
  t.teardown(() => svc.stop());
  const escape = `/usr/svc-escape-${process.pid}`;
  const { body } = await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: `touch ${escape} 2>&1 || true\necho pid=$$\necho ok > inside.txt && cat inside.txt\necho home=$HOME` } });
  const run = await waitForRunState(svc, body.run.id);
  t.is(run.state, 'succeeded');
  const log = await events(svc, run.id);
  t.is(log.find((event) => event.kind === 'sandbox.started').payload.isolation, 'bubblewrap');
  const out = log.filter((event) => event.stream === 'stdout').map((event) => event.payload.text as string);
  t.false(existsSync(escape), 'the host file system is read-only to the agent');
  t.true(out.some((line) => /Read-only file system/.test(line)));
  t.true(Number(out.find((line) => line.startsWith('pid='))!.slice(4)) < 10, 'a fresh PID namespace');
  t.true(out.includes('ok'), 'the workspace is writable');
  t.regex(out.find((line) => line.startsWith('home='))!, /sandboxes\/run_[0-9a-z]{12}\/home$/);
});

test('a sandbox that cannot start fails the run with sandbox_failed', async (t) => {
  if (!bubblewrapWorks()) {
    t.log('bubblewrap cannot run here: nothing to refuse');
    t.pass();
    return;
  }
  // A bind mount whose source does not exist: bubblewrap itself refuses to start the sandbox.
  const svc = await startTestStack({ env: { SVC_SANDBOX: 'bubblewrap', SVC_SANDBOX_BINDS: '/nonexistent/svc-cache:/cache' } });
  t.teardown(() => svc.stop());
  const { body } = await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo never' } });
  const run = await waitForRunState(svc, body.run.id);
  t.like(run, { state: 'failed', failureReason: 'sandbox_failed' });
  t.true((await events(svc, run.id)).some((event) => event.stream === 'stderr' && /^bwrap: /.test(event.payload.text)));
});
