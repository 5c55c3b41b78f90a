// Attack: root in, root out. Whatever uid svc runs as (root on these machines), the agent has no
// capability, cannot gain one (no_new_privs, no nested user namespace), cannot remount the host
// writable, lives in namespaces of its own, and cannot signal anything outside its sandbox.
import test from 'ava';
import { spawn } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { probe, reported, runAttack } from './hostile-agent.ts';

const NAMESPACES = ['pid', 'net', 'ipc', 'uts', 'mnt', 'user', 'cgroup'];
let svc: TestStack;
test.before(async () => {
  svc = await startTestStack({ env: { SVC_SANDBOX_MAX_PROCESSES: '64' } });
});
test.after.always(() => svc?.stop());

test.serial('the agent holds no capability and no way to get one', async (t) => {
  const bystander = spawn('sleep', ['300'], { stdio: 'ignore' });
  t.teardown(() => bystander.kill('SIGKILL'));
  const prompt = [
    'echo uid=$(id -u)',
    'for field in CapInh CapPrm CapEff CapBnd CapAmb NoNewPrivs; do echo $field=$(awk -v f="$field:" \'$1==f {print ' +
      "$2}' /proc/self/status); done",
    ...NAMESPACES.map((ns) => `echo ns_${ns}=$(readlink /proc/self/ns/${ns})`),
    probe('remount', 'mount -o remount,bind,rw /'),
    probe('remount_usr', 'mount -o remount,rw /usr'),
    probe('mount_tmpfs', 'mount -t tmpfs none /tmp'),
    probe('nested_userns', 'unshare --user --map-root-user true'),
    probe('chroot', 'chroot / true'),
    probe('setuid_root', 'su -c true root </dev/null'),
    `kill -9 ${bystander.pid} 2>/dev/null; kill -9 -1 2>/dev/null; echo killed`,
  ].join('\n');
  const { run, stdout } = await runAttack(svc, prompt);
  t.true(['succeeded', 'failed'].includes(run.state));
  t.not(reported(stdout, 'uid'), '0', 'the agent is not root, even in its own namespace');
  for (const field of ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb'])
    t.is(reported(stdout, field), '0000000000000000', `${field} is empty`);
  t.is(reported(stdout, 'NoNewPrivs'), '1');
  for (const ns of NAMESPACES) {
    const host = readlinkSync(`/proc/self/ns/${ns}`);
    t.not(reported(stdout, `ns_${ns}`), host, `the agent has its own ${ns} namespace`);
  }
  for (const attempt of ['remount', 'remount_usr', 'mount_tmpfs', 'nested_userns', 'chroot', 'setuid_root'])
    t.is(reported(stdout, attempt), 'no', attempt);
  t.is(bystander.exitCode, null, 'a host process the agent tried to kill is alive');
  t.is(bystander.signalCode, null);
});

test.serial(
  "a fork bomb stays inside its run: the run's uid may hold only SVC_SANDBOX_MAX_PROCESSES tasks",
  async (t) => {
    if (process.getuid?.() !== 0) {
      // Without root there is no uid of the run's own to count against; the limit is a root-mode wall.
      // CI runs svc as root (it installs bubblewrap itself), so there this wall must be tested.
      if (process.env.CI) return t.fail('CI runs as root: the per-run process limit must be tested there');
      t.log('svc is not root here: the per-run process limit does not apply');
      t.pass();
      return;
    }
    // The bomb in a subshell (bash gives up on the first fork it cannot make), then only builtins:
    // at the limit not even a $(…) can fork.
    const prompt =
      '( for i in {1..300}; do sleep 30 & done ) 2>/dev/null\nalive=0; for p in /proc/[0-9]*; do alive=$((alive+1)); ' +
      'done\necho alive=$alive';
    const { run, stdout } = await runAttack(svc, prompt);
    t.is(run.state, 'succeeded', JSON.stringify(run));
    const alive = Number(reported(stdout, 'alive'));
    t.true(alive > 10 && alive <= 64, `processes in the sandbox: ${alive}`);
  },
);
