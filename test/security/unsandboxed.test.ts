// No sandbox is never the quiet default: SVC_SANDBOX=process is refused unless the operator opts
// in with SVC_ALLOW_UNSANDBOXED=1, and then start-up and every run's sandbox.started say so. On
// this machine (as in CI) bubblewrap works, and the default is to use it.
import test from 'ava';
import { bubblewrapWorks } from '../../sandbox/host/isolation.ts';
import { loadConfig } from '../../platform/config.ts';
import { startTestStack } from '../support/stack.ts';
import { runAttack } from './hostile-agent.ts';

test("the sandbox is there: bubblewrap builds svc's sandbox on this machine", (t) => {
  // CI installs bubblewrap (scripts/test); a machine where it cannot run must fail here, not skip.
  t.true(bubblewrapWorks(), 'bubblewrap cannot build a sandbox here: install it and allow user namespaces');
  t.is(loadConfig({}).sandbox.mode, 'auto');
});

test('SVC_SANDBOX=process is refused without the explicit opt-in', (t) => {
  t.throws(() => loadConfig({ SVC_SANDBOX: 'process' }), { message: /SVC_ALLOW_UNSANDBOXED=1/ });
  t.is(loadConfig({ SVC_SANDBOX: 'process', SVC_ALLOW_UNSANDBOXED: '1' }).sandbox.mode, 'process');
});

test.serial('an opted-in unsandboxed worker warns at start and on every run', async (t) => {
  const lines: string[] = [];
  const svc = await startTestStack({
    env: { SVC_SANDBOX: 'process', SVC_ALLOW_UNSANDBOXED: '1' },
    log: (line) => lines.push(line),
  });
  t.teardown(() => svc.stop());
  t.true(
    lines.some((line) => /^WARNING: agents run as plain processes/.test(line)),
    lines.join('\n'),
  );
  const { run, events } = await runAttack(svc, 'echo bare');
  t.is(run.state, 'succeeded');
  const started = events.find((event) => event.kind === 'sandbox.started');
  t.like(started?.payload, { isolation: 'process' });
  t.regex(started?.payload.warning ?? '', /nothing isolates them/);
});

test.serial('a bubblewrap run says which allowlist it got and carries no warning', async (t) => {
  const svc = await startTestStack();
  t.teardown(() => svc.stop());
  const { events } = await runAttack(svc, 'true');
  const started = events.find((event) => event.kind === 'sandbox.started');
  t.like(started?.payload, { isolation: 'bubblewrap' });
  t.is(started?.payload.warning, undefined);
  t.true(started?.payload.egress.includes('github.com:80|443 (builtin)'));
});
