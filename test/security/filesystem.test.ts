// Attack: take over the control plane from the file system. A running victim run holds a secret
// in its workspace; the attacker run goes looking for the operator token, the read model, the
// victim's workspace and launch spec (its run token), svc's checkout, /root and /home, and tries
// to write or delete on the host, svc's own agent CLIs included. The sandbox shows none of it, and
// nothing outside changes.
import test from 'ava';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { SVC_AGENT_BIN } from '../../sandbox/host/sandbox-launch.ts';
import { compileCacheDir } from '../../platform/compile-cache.ts';
import { startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';
import { assertPathsHidden, hostTrap, pathProbes, probe, reported, runAttack } from './hostile-agent.ts';

let svc: TestStack;
test.before(async () => {
  svc = await startTestStack();
});
test.after.always(() => svc?.stop());

const digest = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

test.serial("an agent sees nothing of svc's data, the host's homes, svc's checkout or another run", async (t) => {
  const dataDir = svc.config.dataDir;
  const victim = (
    await svc.request('POST', '/runs', {
      body: { agent: 'shell', prompt: 'echo victim-secret-4242 > secret.txt\nsleep 120' },
    })
  ).body.run.id as string;
  await waitForRunState(svc, victim, ['running']);
  const victimWorkspace = join(dataDir, 'workspaces', victim);
  const victimLaunch = join(dataDir, 'sandboxes', victim, 'launch.json');
  const before = { token: digest(join(dataDir, 'operator-token')), launch: digest(victimLaunch) };
  const trap = hostTrap();
  const agentBin = realpathSync(SVC_AGENT_BIN);
  const targets: Record<string, string> = {
    token: join(dataDir, 'operator-token'),
    database: join(dataDir, 'svc.sqlite'),
    dataDir,
    sandboxes: join(dataDir, 'sandboxes'),
    victimLaunch,
    victimWorkspace,
    victimSecret: join(victimWorkspace, 'secret.txt'),
    checkout: resolve('package.json'),
    root: '/root/.bashrc',
    ...Object.fromEntries(readdirSync('/home').map((user) => [`home_${user}`, join('/home', user)])),
    hostHome: homedir(),
    shadow: '/etc/shadow',
    trap: trap.dir,
    workerProcess: `/proc/${process.pid}/environ`,
    // Code svc's own processes run (stripped TypeScript, V8's code cache): platform/compile-cache.ts.
    compileCache: compileCacheDir(process.env) ?? join(homedir(), '.cache', 'svc', 'node-compile-cache'),
  };
  const prompt = [
    ...pathProbes(targets),
    probe('writes_usr', 'touch /usr/svc-escape'),
    probe('writes_etc', 'touch /etc/svc-escape'),
    probe('writes_root', 'touch /svc-escape'),
    // svc's own programs in the sandbox (its init runs the agent): bound read-only, as JavaScript.
    probe('writes_programs', 'touch /run/svc/bin/init.mjs'),
    probe('programs_js', 'test -s /run/svc/bin/init.mjs'),
    // The built-in agents' CLIs, from svc's own node_modules: on the agent's PATH, never writable.
    probe('cli_found', 'test -x "$(command -v claude)"'),
    probe('writes_cli', 'touch "$(readlink -f "$(command -v claude)")"'),
    probe('writes_cli_link', `touch '${agentBin}/claude'`),
    probe('writes_node_modules', `touch '${dirname(agentBin)}/svc-escape'`),
    probe('removes_canary', `rm -f '${trap.canary}'`),
    'echo found=$(find / -xdev -name secret.txt 2>/dev/null | head -1)',
    'echo operator_env=$(env -u SVC_PROMPT | grep -c -i -E "SVC_API_TOKEN|GIT_TOKEN|GITHUB_TOKEN|DATABASE_URL")',
  ].join('\n');
  const { run, stdout, everything } = await runAttack(svc, prompt);
  t.is(run.state, 'succeeded', JSON.stringify(run));
  assertPathsHidden(t, stdout, targets);
  for (const label of ['writes_usr', 'writes_etc', 'writes_root', 'writes_programs', 'writes_cli', 'writes_cli_link'])
    t.is(reported(stdout, label), 'no', label);
  t.is(reported(stdout, 'programs_js'), 'yes', 'the probe reached the program it tried to write');
  t.is(reported(stdout, 'cli_found'), 'yes', "the agent's CLI it tried to write is there");
  t.is(reported(stdout, 'writes_node_modules'), 'no');
  t.is(reported(stdout, 'found'), '', "no other run's workspace is anywhere in the sandbox");
  t.is(reported(stdout, 'operator_env'), '0', "no svc credential or database URL in the agent's environment");
  t.false(everything.includes(svc.token), 'the operator token appears nowhere in the run');
  t.false(everything.includes('victim-secret-4242'));
  // Nothing outside the run changed: the canary, the token, the victim's launch spec and secret.
  t.is(readFileSync(trap.canary, 'utf8'), 'untouched\n');
  t.deepEqual({ token: digest(join(dataDir, 'operator-token')), launch: digest(victimLaunch) }, before);
  t.is(readFileSync(join(victimWorkspace, 'secret.txt'), 'utf8'), 'victim-secret-4242\n');
  await svc.request('POST', `/runs/${victim}/cancel`);
});

test.serial(
  'the agent writes its own workspace as an unprivileged host uid, and svc keeps its files to itself',
  async (t) => {
    const { run } = await runAttack(svc, 'echo mine > mine.txt');
    t.is(run.state, 'succeeded');
    const dataDir = svc.config.dataDir;
    const owner = statSync(join(dataDir, 'workspaces', run.id, 'mine.txt')).uid;
    if (process.getuid?.() === 0) t.not(owner, 0, 'files the agent makes belong to its own uid, not root');
    else t.is(owner, process.getuid!());
    t.is(statSync(dataDir).mode & 0o777, 0o700, 'the data directory is 0700');
    for (const file of [
      'operator-token',
      'svc.sqlite',
      join('sandboxes', run.id, 'launch.json'),
      join('sandboxes', run.id, 'stdout.log'),
      join('sandboxes', run.id, 'supervisor.json'),
    ]) {
      t.is(statSync(join(dataDir, file)).mode & 0o077, 0, `${file} is readable by svc alone`);
    }
  },
);
