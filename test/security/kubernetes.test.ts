// The attacks of test/security/ against SVC_SANDBOX=kubernetes: a hostile shell agent in a pod (the
// stand-in API runs it on Podman, with deploy/kubernetes's NetworkPolicy enforced on the node)
// tries for root, for svc's files, for the worker's network, for another run's gateway, and to
// write outside its workspace through what it hands back. The walls (docs/sandboxes.md): the
// restricted Pod Security profile (non-root run uid, no capability, no privilege escalation, the
// runtime's seccomp profile, or svc's own where the operator installed it: no ptrace), only the
// images the operator allows, a read-only image root and empty volumes (nothing of the worker), the
// run's gateway as its only way out (a per-run token, this run's proxies and files alone), and the
// hand-back unpacked as the run's own uid by GNU tar (no `..`, no absolute names, symlinks last).
import test from 'ava';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { join, resolve } from 'node:path';
import { readJsonIfExists } from '../../sandbox/host/files.ts';
import { podName } from '../../sandbox/backends/kubernetes/pod-launch.ts';
import { parseSandboxSettings } from '../../platform/sandbox-settings.ts';
import { backendRuns } from '../support/backend-runs.ts';
import { startContainerEngine, type TestContainerEngine } from '../support/container-engine.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { kubernetesEnv } from '../support/kube-node.ts';
import { KubeStandIn } from '../support/kube-stand-in.ts';
import { waitFor } from '../support/processes.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import {
  assertPathsHidden,
  pathProbes,
  probe,
  reported,
  runAttack,
  TRACE_ATTEMPTS,
  traceProbes,
} from './hostile-agent.ts';

const CAPABILITY_SETS = ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb'];
const FORGE_TOKEN = 'ghp_kubernetesforgetoken0123456789abcdef';
/** svc's profile, installed on the node (the stand-in's seccomp directory holds it as `seccomp.json`). */
const NODE_PROFILE = 'seccomp.json';
const github = new GitHubStandIn();
let engine: TestContainerEngine;
let kube: KubeStandIn;
let svc: TestStack;

test.before(async () => {
  engine = await startContainerEngine();
  kube = new KubeStandIn({ engine: engine.address });
  await kube.start();
  github.createRepo('acme', 'foreign-image', {
    files: { '.svc/config.yaml': 'agentImage: docker.io/library/busybox\n' },
  });
  svc = await startTestStack({
    env: {
      ...kubernetesEnv(kube),
      SVC_GIT_TOKEN: FORGE_TOKEN,
      SVC_KUBERNETES_SECCOMP_PROFILE: NODE_PROFILE,
    },
  });
});
const { register } = backendRuns(() => svc);
test.after.always(async () => {
  await svc?.stop();
  await kube?.stop();
  await engine?.stop();
});

const dispatch = async (prompt: string) => {
  const response = await svc.request('POST', '/runs', { body: { agent: 'shell', prompt } });
  if (response.status !== 201) throw new Error(`dispatch: ${response.status} ${response.text}`);
  return response.body.run.id as string;
};
/** A node one-liner that talks to the run's gateway as the harness does, with the token it finds in PID 1. */
const gatewayClient = (channel: string, payload: string, gateway = 'pod.gateway') =>
  `node -e 'const fs=require("fs"),net=require("net");` +
  `const line=fs.readFileSync("/proc/1/environ","utf8").split("\\0").find(l=>l.startsWith("SVC_INIT_POD="));` +
  `const pod=JSON.parse(line.slice(13));const to=${gateway};const i=to.lastIndexOf(":");` +
  `const s=net.connect(+to.slice(i+1),to.slice(0,i),()=>{s.write("SVC1 "+pod.token+" ` +
  `${channel}\\n");s.end(${payload});});` +
  `let a="";s.on("data",d=>a+=d);s.on("error",()=>{});s.on("close",()=>console.log("answer="+a.split("\\n")[0]))'`;

test.serial('the agent in its pod is the run uid, holds no capability, gains none, cannot nest', async (t) => {
  const prompt = [
    'echo uid=$(id -u)',
    `for field in ${CAPABILITY_SETS.join(' ')} NoNewPrivs Seccomp; do echo $field=$(awk -v f="$field:" '$1==f {print ` +
      `$2}' /proc/self/status); done`,
    probe('remount', 'mount -o remount,rw /'),
    probe('mount_tmpfs', 'mount -t tmpfs none /tmp'),
    probe('nested_userns', 'unshare --user --map-root-user true'),
    probe('chroot', 'chroot / true'),
    probe('setuid_root', 'su -c true root </dev/null'),
    probe('writes_root', 'touch /svc-escape'),
    probe('writes_usr', 'touch /usr/svc-escape'),
  ].join('\n');
  const { run, stdout } = await runAttack(svc, prompt);
  t.is(run.state, 'succeeded', JSON.stringify(run));
  const uid = statSync(join(svc.config.dataDir, 'workspaces', run.id)).uid;
  t.not(uid, 0);
  const attempts = ['remount', 'mount_tmpfs', 'nested_userns', 'chroot', 'setuid_root', 'writes_root', 'writes_usr'];
  t.deepEqual(
    {
      uid: reported(stdout, 'uid'),
      ...Object.fromEntries(CAPABILITY_SETS.map((field) => [field, reported(stdout, field)])),
      NoNewPrivs: reported(stdout, 'NoNewPrivs'),
      Seccomp: reported(stdout, 'Seccomp'),
      ...Object.fromEntries(attempts.map((attempt) => [attempt, reported(stdout, attempt)])),
    },
    {
      uid: String(uid),
      ...Object.fromEntries(CAPABILITY_SETS.map((field) => [field, '0000000000000000'])),
      NoNewPrivs: '1',
      Seccomp: '2',
      ...Object.fromEntries(attempts.map((attempt) => [attempt, 'no'])),
    },
  );
});

test.serial("the pod holds nothing of the worker: svc's data, its checkout, its credentials", async (t) => {
  const dataDir = svc.config.dataDir;
  const targets: Record<string, string> = {
    token: join(dataDir, 'operator-token'),
    dataDir,
    checkout: resolve('package.json'),
    root: '/root/.bashrc',
    ...Object.fromEntries(readdirSync('/home').map((user) => [`home_${user}`, join('/home', user)])),
  };
  const prompt = [
    ...pathProbes(targets),
    probe('reads_shadow', 'cat /etc/shadow'),
    "echo env_tokens=$(cat /proc/[0-9]*/environ 2>/dev/null | grep -z -v '^SVC_PROMPT=' | grep -z -c -E " +
      "'svc1\\.|ghp_|_TOKEN=')",
  ].join('\n');
  const { run, stdout, everything } = await runAttack(svc, prompt);
  t.is(run.state, 'succeeded', JSON.stringify(run));
  assertPathsHidden(t, stdout, targets);
  t.is(reported(stdout, 'reads_shadow'), 'no');
  t.is(reported(stdout, 'env_tokens'), '0', 'no svc token in any environment in the pod');
  for (const secret of [svc.token, FORGE_TOKEN]) t.false(everything.includes(secret), secret);
  // The prompt (an env value) names the paths it probes; everything else must not.
  const manifests = JSON.stringify(kube.created, (key, value) =>
    value && typeof value === 'object' && value.name === 'SVC_PROMPT' ? undefined : value,
  );
  for (const secret of [svc.token, FORGE_TOKEN]) t.false(manifests.includes(secret), 'no svc secret in a manifest');
  const leaks = manifests.split('"').filter((text) => text.includes(dataDir));
  t.deepEqual(leaks, [], 'no worker path in a manifest');
});

test.serial("the pod reaches only its own gateway: no worker port, no other run's gateway", async (t) => {
  // A worker service on every interface: a pod with any route to the node but the gateway reaches it.
  const hits: string[] = [];
  const listener: Server = createServer((socket) => {
    hits.push(String(socket.remoteAddress));
    socket.destroy();
  });
  // Outside the gateway ports (which the policy opens), where a worker's other services are.
  const gatewayPorts = parseSandboxSettings({}).kubernetes.gatewayPorts;
  let port: number;
  do {
    if (listener.listening) await new Promise((done) => listener.close(done));
    await new Promise<void>((done) => listener.listen(0, '0.0.0.0', done));
    port = (listener.address() as AddressInfo).port;
  } while (port >= gatewayPorts.first && port <= gatewayPorts.last);
  t.teardown(() => listener.close());
  const victim = await dispatch('echo victim at work\nsleep 60');
  t.teardown(() => svc.request('POST', `/runs/${victim}/cancel`));
  const victimGateway = join(svc.config.dataDir, 'sandboxes', victim, 'gateway.json');
  await waitFor(async () => existsSync(victimGateway), "the victim's gateway");
  const victimPort = readJsonIfExists<{ port: number }>(victimGateway)!.port;
  const other = `"${kube.gatewayHost}:${victimPort}"`;
  const unproxied = 'env NO_PROXY= no_proxy= curl -sf -m 5';
  const status = `curl -s -m 5 -o /dev/null -w '%{http_code}'`;
  const prompt = [
    probe('worker_port', `timeout 5 bash -c 'echo > /dev/tcp/${kube.gatewayHost}/${port}'`),
    probe('postgres', `timeout 5 bash -c 'echo > /dev/tcp/${kube.gatewayHost}/5432'`),
    probe('unlisted_https', 'curl -sf -m 5 https://example.com/'),
    probe('postgres_proxy', `${unproxied} -p -x http://127.0.0.1:3128 http://127.0.0.1:5432/`),
    // The one call that must get through: patient on a loaded machine (the refusals stay quick).
    `echo own_inbox=$(curl -s -m 20 --retry 3 --retry-all-errors -o /dev/null -w '%{http_code}' ` +
      `"$SVC_BASE_URL/runs/$SVC_RUN_ID/inbox?peek=1")`,
    `echo other_inbox=$(${status} "$SVC_BASE_URL/runs/${victim}/inbox?peek=1")`,
    `echo whoami=$(${status} -H "Authorization: Bearer ${svc.token}" $SVC_BASE_URL/whoami)`,
    // Its own token on the victim's gateway, and a made-up token on its own: nothing answers.
    gatewayClient('in:workspace', '""', other).replace('answer=', 'stolen_workspace='),
    gatewayClient('callback', `"GET /runs/${victim}/inbox HTTP/1.0\\r\\n\\r\\n"`, other).replace(
      'answer=',
      'stolen_inbox=',
    ),
    gatewayClient('in:files', '""').replace('pod.token', '"forged"').replace('answer=', 'forged_token='),
    gatewayClient('in:nothing', '""').replace('answer=', 'unknown_part='),
  ].join('\n');
  const { run, stdout } = await runAttack(svc, prompt);
  t.is(run.state, 'succeeded', JSON.stringify(run));
  for (const attempt of ['worker_port', 'postgres', 'unlisted_https', 'postgres_proxy'])
    t.is(reported(stdout, attempt), 'no', `${attempt} got through`);
  t.deepEqual(hits, [], 'the worker service never saw a connection');
  t.is(reported(stdout, 'own_inbox'), '200', "the run's own callback route answers");
  t.is(reported(stdout, 'other_inbox'), '403', "another run's inbox is refused");
  t.is(reported(stdout, 'whoami'), '403', 'a stolen operator token opens nothing');
  for (const attempt of ['stolen_workspace', 'stolen_inbox', 'forged_token', 'unknown_part'])
    t.is(reported(stdout, attempt), '', `${attempt}: the gateway answered`);
});

test.serial('what a pod hands back cannot write outside its workspace (symlinks, .., absolute names)', async (t) => {
  const id = `${process.pid}-${Date.now()}`;
  const escapes = [`/tmp/svc-escape-link-${id}`, `/tmp/svc-escape-dotdot-${id}`, `/tmp/svc-escape-absolute-${id}`];
  const prompt = [
    'set -e; mkdir -p /tmp/evil/a /tmp/evil/b/evil && cd /tmp/evil',
    // A symlink to the node's /tmp, then a file through it; a `..` name; an absolute name.
    'ln -s /tmp a/evil && tar -cf evil.tar -C a evil',
    `echo pwned > b/evil/svc-escape-link-${id} && tar -rf evil.tar -C b evil/svc-escape-link-${id}`,
    `echo pwned > b/x && tar -rPf evil.tar -C b --transform 's|^x$|../../../../../../tmp/svc-escape-dotdot-${id}|' x`,
    `tar -rPf evil.tar -C b --transform 's|^x$|/tmp/svc-escape-absolute-${id}|' x`,
    'cd /workspace; set +e',
    gatewayClient('out:workspace', 'fs.readFileSync("/tmp/evil/evil.tar")').replace('answer=', 'handback='),
  ].join('\n');
  const { run, stdout } = await runAttack(svc, prompt);
  t.is(run.state, 'succeeded', JSON.stringify(run));
  t.truthy(reported(stdout, 'handback'), 'the crafted archive reached the gateway');
  for (const path of escapes) t.false(existsSync(path), `${path} was written on the worker`);
  // The harness's own hand-back came after: the workspace is the agent's real one.
  t.false(existsSync(join(svc.config.dataDir, 'workspaces', run.id, 'evil')), 'the crafted archive was replaced');
});

test.serial("no process in the pod can trace another, under svc's profile installed on the node", async (t) => {
  const { run, stdout } = await runAttack(
    svc,
    [`echo Seccomp=$(awk '$1=="Seccomp:" {print $2}' /proc/self/status)`, ...traceProbes(), 'echo done'].join('\n'),
  );
  t.is(run.state, 'succeeded', JSON.stringify(run));
  const pod = kube.created.find((entry) => entry.metadata?.name === podName(run.id));
  t.deepEqual(pod?.spec?.securityContext?.seccompProfile, { type: 'Localhost', localhostProfile: NODE_PROFILE });
  t.deepEqual(
    Object.fromEntries(TRACE_ATTEMPTS.map((label) => [label, reported(stdout, label)])),
    Object.fromEntries(TRACE_ATTEMPTS.map((label) => [label, 'no'])),
  );
  t.true(stdout.includes('done'), 'the attack ran to its end');
});

test.serial("a project's agentImage outside SVC_AGENT_IMAGES makes no pod: refused at dispatch", async (t) => {
  const project = await register('foreign-image');
  const pods = kube.created.length;
  const refused = await svc.request('POST', '/runs', { body: { agent: 'shell', project, prompt: 'id' } });
  t.is(refused.status, 422, refused.text);
  t.is(refused.body.error.code, 'svc_config_invalid');
  t.regex(refused.body.error.message, /agentImage "docker\.io\/library\/busybox".*SVC_AGENT_IMAGES/);
  t.is(kube.created.length, pods, 'no pod was asked for');
});
