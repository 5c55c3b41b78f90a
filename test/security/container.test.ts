// The attacks of test/security/ against SVC_SANDBOX=container: a hostile shell agent in a real
// Podman container (Docker Engine API) tries for root, for svc's files and another run's, for the
// host's network and svc's API, and to drown the host in processes. The walls are the container's
// (docs/security.md, 10): the run's own unprivileged host uid, no capability, no_new_privs, a
// read-only image root with only the run's directories bound, no network but loopback (svc's
// proxies and the run's callback routes), a process limit, svc's seccomp profile (no namespace
// creation, no ptrace); its namespaces are the engine's (PID, mount, network, IPC, UTS), not a user
// namespace: the uid is the host's run uid. The engine's copy of the output is capped, and a
// project may run only an image the operator allows (SVC_AGENT_IMAGES).
import test from 'ava';
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, readdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { networkInterfaces } from 'node:os';
import { join, resolve } from 'node:path';
import { ENGINE_LOG_MAX_MIB } from '../../sandbox/backends/container/container-launch.ts';
import { agentImageRefusal, DEFAULT_AGENT_IMAGE, parseSandboxSettings } from '../../platform/sandbox-settings.ts';
import { backendRuns } from '../support/backend-runs.ts';
import { startContainerEngine, type TestContainerEngine } from '../support/container-engine.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { waitFor } from '../support/processes.ts';
import { runStdout, startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';
import {
  assertPathsHidden,
  eventsOf,
  hostTrap,
  pathProbes,
  probe,
  reported,
  runAttack,
  TRACE_ATTEMPTS,
  traceProbes,
} from './hostile-agent.ts';

const MAX_PROCESSES = 64;
/** The operator's CPU limit: a bomb (or any spinning agent) gets half a core, the other runs the rest. */
const CPU_MILLICORES = 500;
/**
 * The engine's namespaces; the user namespace is the host's (the uid is the run's own host uid).
 * Not cgroup: svc asks for a private one, which Docker and newer Podman give, but Podman 4.3's
 * compat API ignores the request (the agent then reads its own cgroup's path; docs/security.md).
 */
const NAMESPACES = ['pid', 'net', 'ipc', 'uts', 'mnt'];
const CAPABILITY_SETS = ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb'];
const FORGE_TOKEN = 'ghp_containerforgetoken0123456789abcdefgh';
/** An image the engine holds but the operator never allowed projects (the agent image's own base). */
const FOREIGN_IMAGE = 'localhost/svc-agent-base:bookworm';
const github = new GitHubStandIn();
let engine: TestContainerEngine;
let svc: TestStack;

test.before(async () => {
  engine = await startContainerEngine();
  github.createRepo('acme', 'foreign-image', { files: { '.svc/config.yaml': `agentImage: ${FOREIGN_IMAGE}\n` } });
  github.createRepo('acme', 'own-image', { files: { '.svc/config.yaml': `agentImage: ${DEFAULT_AGENT_IMAGE}\n` } });
  svc = await startTestStack({
    env: {
      ...engine.env,
      SVC_SANDBOX_MAX_PROCESSES: String(MAX_PROCESSES),
      SVC_SANDBOX_CPU_MILLICORES: String(CPU_MILLICORES),
      SVC_GIT_TOKEN: FORGE_TOKEN,
    },
  });
});
test.after.always(async () => {
  await svc?.stop();
  await engine?.stop();
});

const { register } = backendRuns(() => svc);
const dispatch = async (prompt: string) => {
  const response = await svc.request('POST', '/runs', { body: { agent: 'shell', prompt } });
  if (response.status !== 201) throw new Error(`dispatch: ${response.status} ${response.text}`);
  return response.body.run.id as string;
};
const workspaceOf = (runId: string) => join(svc.config.dataDir, 'workspaces', runId);
/** Tasks (processes and threads) on the host that belong to a uid. */
function hostTasksOf(uid: number): number {
  let tasks = 0;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (statSync(`/proc/${pid}`).uid === uid) tasks += readdirSync(`/proc/${pid}/task`).length;
    } catch {
      // gone meanwhile
    }
  }
  return tasks;
}
const digest = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

test.serial(
  'the agent in its container holds no capability, gains none, and cannot reach a host process',
  async (t) => {
    // The agent learns its target's host pid from its workspace, then tries to kill it (and everything).
    const runId = await dispatch(
      [
        'until [ -s bystander ]; do sleep 0.2; done; target=$(cat bystander)',
        'echo uid=$(id -u)',
        `for field in ${CAPABILITY_SETS.join(' ')} NoNewPrivs Seccomp; do echo $field=$(awk -v f="$field:" '$1==f ` +
          `{print $2}' /proc/self/status); done`,
        ...NAMESPACES.map((ns) => `echo ns_${ns}=$(readlink /proc/self/ns/${ns})`),
        probe('remount', 'mount -o remount,bind,rw /'),
        probe('remount_workspace', 'mount -o remount,rw,suid /workspace'),
        probe('mount_tmpfs', 'mount -t tmpfs none /tmp'),
        probe('nested_userns', 'unshare --user --map-root-user true'),
        probe('chroot', 'chroot / true'),
        probe('setuid_root', 'su -c true root </dev/null'),
        probe('sees_bystander', 'test -e /proc/$target'),
        probe('kill_bystander', 'kill -9 $target'),
        'kill -9 -1 2>/dev/null; echo killed',
      ].join('\n'),
    );
    await waitForRunState(svc, runId, ['running']);
    // A host process of the very uid the agent runs as: only the container's PID namespace shields it.
    const uid = statSync(workspaceOf(runId)).uid;
    t.not(uid, 0, "the run's workspace belongs to an unprivileged uid");
    const bystander = spawn('sleep', ['300'], { stdio: 'ignore', uid, gid: uid });
    t.teardown(() => bystander.kill('SIGKILL'));
    writeFileSync(join(workspaceOf(runId), 'bystander'), `${bystander.pid}\n`);
    chmodSync(join(workspaceOf(runId), 'bystander'), 0o644);
    const run = await waitForRunState(svc, runId, undefined, 90_000);
    const { stdout } = await eventsOf(svc, runId);
    t.true(['succeeded', 'failed'].includes(run.state), JSON.stringify(run));
    // Every wall at once: a diff names each one that gave way.
    const attempts = ['remount', 'remount_workspace', 'mount_tmpfs', 'nested_userns', 'chroot', 'setuid_root'];
    const seen = (ns: string) =>
      reported(stdout, `ns_${ns}`) === readlinkSync(`/proc/self/ns/${ns}`) ? 'host' : 'own';
    t.deepEqual(
      {
        uid: reported(stdout, 'uid'),
        ...Object.fromEntries(CAPABILITY_SETS.map((field) => [field, reported(stdout, field)])),
        NoNewPrivs: reported(stdout, 'NoNewPrivs'),
        Seccomp: reported(stdout, 'Seccomp'),
        ...Object.fromEntries(NAMESPACES.map((ns) => [`ns_${ns}`, seen(ns)])),
        ...Object.fromEntries([...attempts, 'sees_bystander', 'kill_bystander'].map((a) => [a, reported(stdout, a)])),
      },
      {
        uid: String(uid),
        ...Object.fromEntries(CAPABILITY_SETS.map((field) => [field, '0000000000000000'])),
        NoNewPrivs: '1',
        Seccomp: '2',
        ...Object.fromEntries(NAMESPACES.map((ns) => [`ns_${ns}`, 'own'])),
        ...Object.fromEntries([...attempts, 'sees_bystander', 'kill_bystander'].map((a) => [a, 'no'])),
      },
    );
    t.true(stdout.includes('killed'), 'the attack ran to its end');
    t.is(bystander.exitCode, null, 'a host process of the same uid survived kill -9 -1');
    t.is(bystander.signalCode, null);
  },
);

test.serial("the agent sees nothing of svc's data, the host, svc's checkout or another live run", async (t) => {
  const dataDir = svc.config.dataDir;
  const victim = await dispatch('echo victim-secret-4242 > svc-victim-secret.txt\nsleep 120');
  t.teardown(() => svc.request('POST', `/runs/${victim}/cancel`));
  const victimWorkspace = workspaceOf(victim);
  const victimLaunch = join(dataDir, 'sandboxes', victim, 'launch.json');
  await waitFor(async () => existsSync(join(victimWorkspace, 'svc-victim-secret.txt')), 'the victim at work');
  const before = { token: digest(join(dataDir, 'operator-token')), launch: digest(victimLaunch) };
  const trap = hostTrap();
  const targets: Record<string, string> = {
    token: join(dataDir, 'operator-token'),
    database: join(dataDir, 'svc.sqlite'),
    dataDir,
    sandboxes: join(dataDir, 'sandboxes'),
    victimLaunch,
    victimWorkspace,
    victimSecret: join(victimWorkspace, 'svc-victim-secret.txt'),
    checkout: resolve('package.json'),
    root: '/root/.bashrc',
    ...Object.fromEntries(readdirSync('/home').map((user) => [`home_${user}`, join('/home', user)])),
    trap: trap.dir,
    workerProcess: `/proc/${process.pid}/environ`,
  };
  const prompt = [
    ...pathProbes(targets),
    probe('reads_shadow', 'cat /etc/shadow'),
    probe('writes_usr', 'touch /usr/svc-escape'),
    probe('writes_etc', 'touch /etc/svc-escape'),
    probe('writes_root', 'touch /svc-escape'),
    probe('writes_programs', 'touch /run/svc/bin/init.mjs'),
    probe('removes_canary', `rm -f '${trap.canary}'`),
    "echo found=$(find / \\( -path /proc -o -path /sys \\) -prune -o -name 'svc-victim-secret.txt' -print " +
      '2>/dev/null | head -1)',
    'echo operator_env=$(env -u SVC_PROMPT | grep -c -i -E ' +
      '"SVC_API_TOKEN|GIT_TOKEN|GITHUB_TOKEN|DATABASE_URL|TEMPORAL")',
  ].join('\n');
  const { run, stdout, everything } = await runAttack(svc, prompt);
  t.is(run.state, 'succeeded', JSON.stringify(run));
  assertPathsHidden(t, stdout, targets);
  for (const label of ['reads_shadow', 'writes_usr', 'writes_etc', 'writes_root', 'writes_programs'])
    t.is(reported(stdout, label), 'no', label);
  t.is(reported(stdout, 'found'), '', "no other run's workspace is anywhere in the container");
  t.is(reported(stdout, 'operator_env'), '0', "no svc credential or address in the agent's environment");
  for (const secret of [svc.token, FORGE_TOKEN, 'victim-secret-4242']) t.false(everything.includes(secret), secret);
  t.is(readFileSync(trap.canary, 'utf8'), 'untouched\n');
  t.deepEqual({ token: digest(join(dataDir, 'operator-token')), launch: digest(victimLaunch) }, before);
  t.is(readFileSync(join(victimWorkspace, 'svc-victim-secret.txt'), 'utf8'), 'victim-secret-4242\n');
});

test.serial("the network is loopback alone: svc's proxies, refusals as events, the run's own routes", async (t) => {
  // A host service on every interface: a container with any route out (bridge, host network) reaches it.
  const hits: string[] = [];
  const listener: Server = createServer((socket) => {
    hits.push(String(socket.remoteAddress));
    socket.destroy();
  });
  await new Promise<void>((done) => listener.listen(0, '0.0.0.0', done));
  t.teardown(() => listener.close());
  const port = (listener.address() as AddressInfo).port;
  const hostIp = Object.values(networkInterfaces())
    .flat()
    .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address;
  t.truthy(hostIp, 'the host has an address besides loopback');
  const other = await runAttack(svc, 'true');
  const api = new URL(svc.url);
  const tcp = (host: string, to: number) => `timeout 5 bash -c 'echo > /dev/tcp/${host}/${to}'`;
  const unproxied = 'env NO_PROXY= no_proxy= curl -sf -m 5';
  const status = `curl -s -m 5 -o /dev/null -w '%{http_code}'`;
  const prompt = [
    "echo ifaces=$(awk -F: 'NR>2 {gsub(/ /, \"\", $1); print $1}' /proc/net/dev | sort | tr '\\n' ' ')",
    probe('api_direct', tcp('127.0.0.1', Number(api.port))),
    probe('api_curl', `curl -sf -m 5 --noproxy '*' ${svc.url}/healthz`),
    probe('postgres_direct', tcp('127.0.0.1', 5432)),
    probe('host_loopback', tcp('127.0.0.1', port)),
    probe('host_address', tcp(hostIp!, port)),
    probe('unlisted_http', `${unproxied} -x http://127.0.0.1:3128 http://example.com/`),
    probe('unlisted_https', 'curl -sf -m 5 https://example.com/'),
    probe('postgres_proxy', `${unproxied} -p -x http://127.0.0.1:3128 http://127.0.0.1:5432/`),
    probe('postgres_socks', `${unproxied} --socks5-hostname 127.0.0.1:1080 http://127.0.0.1:5432/`),
    probe('api_proxy', `${unproxied} -x http://127.0.0.1:3128 http://${api.host}/healthz`),
    `echo own_inbox=$(${status} "$SVC_BASE_URL/runs/$SVC_RUN_ID/inbox?peek=1")`,
    `echo other_inbox=$(${status} "$SVC_BASE_URL/runs/${other.run.id}/inbox?peek=1")`,
    `echo whoami=$(${status} -H "Authorization: Bearer ${svc.token}" $SVC_BASE_URL/whoami)`,
    // Every process's environment, bar the prompt (it holds the stolen token above).
    "echo env_tokens=$(cat /proc/[0-9]*/environ 2>/dev/null | grep -z -v '^SVC_PROMPT=' | grep -z -c -E " +
      "'svc1\\.|ghp_|_TOKEN=')",
  ].join('\n');
  const { run, stdout, events } = await runAttack(svc, prompt);
  t.is(run.state, 'succeeded', JSON.stringify(run));
  t.is(reported(stdout, 'ifaces'), 'lo', 'no interface but loopback');
  for (const attempt of [
    'api_direct',
    'api_curl',
    'postgres_direct',
    'host_loopback',
    'host_address',
    'unlisted_http',
    'unlisted_https',
    'postgres_proxy',
    'postgres_socks',
    'api_proxy',
  ])
    t.is(reported(stdout, attempt), 'no', `${attempt} got through`);
  t.deepEqual(hits, [], 'the host service never saw a connection');
  t.is(reported(stdout, 'own_inbox'), '200', "the run's own callback route answers, with no token inside");
  t.is(reported(stdout, 'other_inbox'), '403', "another run's inbox is refused");
  t.is(reported(stdout, 'whoami'), '403', 'a stolen operator token opens nothing');
  t.is(reported(stdout, 'env_tokens'), '0', 'no svc token in any environment in the container');
  const refused = events
    .filter((event) => event.kind === 'sandbox.egress_refused')
    .map((event) => `${event.payload.protocol} ${event.payload.destination} ${event.payload.reason}`);
  for (const expected of [
    /example\.com:80 not_allowlisted/,
    /example\.com:443 not_allowlisted/,
    /127\.0\.0\.1:5432 not_allowlisted/,
    new RegExp(`callback GET /runs/${other.run.id}/inbox\\S* not_a_callback_route`),
    /callback GET \/whoami not_a_callback_route/,
  ])
    t.true(
      refused.some((line) => expected.test(line)),
      `no refusal event matching ${expected}: ${refused.join('; ')}`,
    );
});

test.serial(
  'a fork bomb stays inside its container, at SVC_SANDBOX_MAX_PROCESSES and its CPU limit; the host keeps up',
  async (t) => {
    // The bomb in a shell of its own (bash reads this script from fd 0: forked copies of it would move
    // its offset), then only builtins: at the limit not even a $(…) can fork.
    const runId = await dispatch(
      [
        'mkfifo /tmp/hold && exec 3<>/tmp/hold',
        'echo bombing',
        "bash -c 'bomb() { bomb | bomb & }; bomb' </dev/null >/dev/null 2>&1 &",
        'read -t 20 -u 3',
        'alive=0; for p in /proc/[0-9]*; do alive=$((alive+1)); done',
        'echo alive=$alive',
      ].join('\n'),
    );
    await waitFor(async () => (await runStdout(svc, runId)).includes('bombing'), 'the bomb to go off');
    const container = (await engine.engine.inspect(`svc-${runId}`)) as { HostConfig?: { NanoCpus?: number } } | null;
    t.is(container?.HostConfig?.NanoCpus, CPU_MILLICORES * 1_000_000, "the operator's CPU limit applies");
    const uid = statSync(workspaceOf(runId)).uid;
    await new Promise((done) => setTimeout(done, 6000));
    // Seen from the host, while it rages: the run's uid holds no more than its limit.
    const tasks = hostTasksOf(uid);
    t.true(tasks > 10 && tasks <= MAX_PROCESSES, `tasks of the run's uid on the host: ${tasks}`);
    const started = Date.now();
    execFileSync('true');
    const health = await svc.request('GET', '/healthz');
    t.is(health.status, 200);
    t.true(Date.now() - started < 5000, `the host took ${Date.now() - started} ms to fork and answer`);
    const run = await waitForRunState(svc, runId, undefined, 90_000);
    t.is(run.state, 'succeeded', JSON.stringify(run));
    const alive = Number(reported(await runStdout(svc, runId), 'alive'));
    t.true(alive > 10 && alive <= MAX_PROCESSES, `processes in the container: ${alive}`);
    // The bomb ends with its container: nothing of the run's uid is left on the host.
    await waitFor(async () => hostTasksOf(uid) === 0, "the run's processes gone", 30_000);
    t.pass();
  },
);

test.serial(
  "no process in the container can trace another: ptrace, another's memory and fds are refused",
  async (t) => {
    const { run, stdout } = await runAttack(
      svc,
      [`echo Seccomp=$(awk '$1=="Seccomp:" {print $2}' /proc/self/status)`, ...traceProbes(), 'echo done'].join('\n'),
    );
    t.is(run.state, 'succeeded', JSON.stringify(run));
    t.is(reported(stdout, 'Seccomp'), '2', "svc's seccomp profile applies");
    t.deepEqual(
      Object.fromEntries(TRACE_ATTEMPTS.map((label) => [label, reported(stdout, label)])),
      Object.fromEntries(TRACE_ATTEMPTS.map((label) => [label, 'no'])),
    );
    t.true(stdout.includes('done'), 'the attack ran to its end');
  },
);

test.serial("the engine keeps at most a capped copy of the agent's output; svc reads on past its cap", async (t) => {
  const printed = 3 * ENGINE_LOG_MAX_MIB * 1024 * 1024;
  // Lines of 1 MiB, then a marker svc's copy must reach (its follow outlives the engine's
  // truncations), then the container lives on to be measured.
  const runId = await dispatch(
    `head -c ${printed} /dev/zero | tr '\\0' a | fold -w 1048576; echo; echo printed; sleep 120`,
  );
  t.teardown(() => svc.request('POST', `/runs/${runId}/cancel`));
  await waitFor(async () => (await runStdout(svc, runId)).includes('printed'), 'the output copied', 120_000);
  const container = (await engine.engine.inspect(`svc-${runId}`)) as unknown as { LogPath: string };
  const logged = statSync(container.LogPath).size;
  t.true(logged > 0, 'the engine logs the container');
  t.true(
    logged <= ENGINE_LOG_MAX_MIB * 1024 * 1024,
    `the engine's log of the container holds ${logged} bytes for ${printed} printed`,
  );
});

test.serial("a project's agentImage outside SVC_AGENT_IMAGES is refused at dispatch; svc's own runs", async (t) => {
  const foreign = await register('foreign-image');
  const runIds = async () =>
    ((await svc.request('GET', '/runs?limit=200')).body.runs as { id: string }[]).map((r) => r.id);
  const before = await runIds();
  const refused = await svc.request('POST', '/runs', { body: { agent: 'shell', project: foreign, prompt: 'id' } });
  t.is(refused.status, 422, refused.text);
  t.is(refused.body.error.code, 'svc_config_invalid');
  t.regex(refused.body.error.message, new RegExp(`agentImage "${FOREIGN_IMAGE}".*SVC_AGENT_IMAGES`));
  t.false(refused.body.error.message.includes(svc.config.sandbox.container.image), 'the allowed images go unnamed');
  t.deepEqual(await runIds(), before, 'no run was created');
  const own = await register('own-image');
  const response = await svc.request('POST', '/runs', { body: { agent: 'shell', project: own, prompt: 'echo ran' } });
  t.is(response.status, 201, response.text);
  const run = await waitForRunState(svc, response.body.run.id, undefined, 90_000);
  t.is(run.state, 'succeeded', JSON.stringify(run));
});

test("SVC_AGENT_IMAGES holds exact references and prefixes ending in /* or :*, and svc's own image", (t) => {
  const { container } = parseSandboxSettings({
    SVC_AGENT_IMAGES: 'registry.example/agents/*, localhost/tools:*,ghcr.io/acme/agent@sha256:0123abcd',
  });
  const allowed = (image: string) => agentImageRefusal(image, container) === null;
  t.true(allowed(DEFAULT_AGENT_IMAGE), "svc's own image is always allowed");
  t.true(allowed('registry.example/agents/node:22'));
  t.true(allowed('localhost/tools:1.2'));
  t.true(allowed('ghcr.io/acme/agent@sha256:0123abcd'));
  t.false(allowed('registry.example/agentsevil/node:22'), 'a prefix stops at its /');
  t.false(allowed('registry.example/agents/'), 'a prefix alone names no image');
  t.false(allowed('localhost/tools-evil:1'));
  t.false(allowed('ghcr.io/acme/agent:latest'), 'a digest allows that digest only');
  t.false(allowed(FOREIGN_IMAGE));
  for (const bad of ['registry.example/*/agent', 'a b', 'image;rm -rf /', '*'])
    t.throws(() => parseSandboxSettings({ SVC_AGENT_IMAGES: bad }), { message: /SVC_AGENT_IMAGES/ }, bad);
});
