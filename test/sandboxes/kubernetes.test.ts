// The Kubernetes backend end to end, against the stand-in API (test/support/kube-stand-in.ts: the
// Pod endpoints svc calls, every manifest validated against the official schema and the restricted
// Pod Security Standard, each pod's container run for real on Podman on an internal network that
// reaches only the host). A run's agent commits in its pod, hands its workspace back through the
// run's gateway, the finalizer (a pod of its own) hands the branch over, svc pushes and opens the
// PR; cancel stops the pod; OOM, eviction, a vanished pod and a silent API are the run's reasons
// (a repository's services: kubernetes-services.test.ts).
import test from 'ava';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startContainerEngine, type TestContainerEngine } from '../support/container-engine.ts';
import { backendRuns, pollerAgentsFile } from '../support/backend-runs.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { kubernetesEnv } from '../support/kube-node.ts';
import { KubeStandIn } from '../support/kube-stand-in.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { waitFor } from '../support/processes.ts';
import { runStdout, startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

const github = new GitHubStandIn();
const forge = new PullRequestsStandIn();
let engine: TestContainerEngine;
let kube: KubeStandIn;
let svc: TestStack;

const settings = mkdtempSync(join(tmpdir(), 'svc-kube-settings-'));
const agentsFile = pollerAgentsFile();
// What an operator fixes for every run pod: a node pool, and a model key from a Secret by reference.
const podDefaults = join(settings, 'pod-defaults.json');
writeFileSync(
  podDefaults,
  JSON.stringify({
    nodeSelector: { 'svc.dev/pool': 'agents' },
    tolerations: [{ key: 'svc.dev/agents', operator: 'Exists', effect: 'NoSchedule' }],
    secretEnv: [{ name: 'MODEL_TOKEN', secret: 'model-key', key: 'token' }],
    projectsMay: { secrets: ['team-key'] },
  }),
);

test.before(async () => {
  engine = await startContainerEngine();
  kube = new KubeStandIn({
    engine: engine.address,
    secrets: { 'model-key': { token: 'sk-from-a-secret' }, 'team-key': { value: 'team-secret' } },
  });
  await kube.start();
  await forge.start();
  github.createRepo('acme', 'podded', { files: { 'src/app.txt': 'one\n' } });
  github.createRepo('acme', 'small', { files: { '.svc/config.yaml': 'resources:\n  limits:\n    memoryMiB: 64\n' } });
  const podConfig = (secret: string) =>
    [
      'kubernetes:',
      '  nodeSelector: { svc.dev/team: search, svc.dev/pool: theirs }',
      '  tolerations: [{ key: svc.dev/gpu, operator: Exists, effect: NoSchedule }]',
      `  secretEnv: [{ name: TEAM_KEY, secret: ${secret}, key: value }]`,
    ].join('\n');
  github.createRepo('acme', 'scheduled', { files: { '.svc/config.yaml': podConfig('team-key') } });
  github.createRepo('acme', 'overreaching', { files: { '.svc/config.yaml': podConfig('model-key') } });
  github.createRepo('acme', 'capped', { files: { '.svc/config.yaml': 'admission:\n  maxConcurrentRuns: 1\n' } });
  github.createRepo('acme', 'imageless', {
    files: { '.svc/config.yaml': 'agentImage: localhost/svc-no-such-image:1\n' },
  });
  svc = await startTestStack({
    env: {
      ...kubernetesEnv(kube),
      SVC_GIT_TOKEN: 'ghp_test',
      SVC_GITHUB_API_URL: forge.url,
      SVC_FINALIZE_TIMEOUT_MS: '60000',
      SVC_KUBERNETES_UNREACHABLE_MS: '3000',
      SVC_KUBERNETES_POD_DEFAULTS: podDefaults,
      SVC_AGENTS_FILE: agentsFile,
      SVC_RECONCILE_STALE_AFTER_MS: '1000',
      SVC_ADMISSION_PENDING_PODS: '2',
      // Allowed, so the pod is made and the cluster fails to pull it.
      SVC_AGENT_IMAGES: 'localhost/svc-no-such-image:1',
    },
  });
});
test.after.always(async () => {
  await svc?.stop();
  await forge.stop();
  await kube?.stop();
  await engine?.stop();
});

const { register, dispatch, events, reconcilerPass } = backendRuns(() => svc);

const podOf = (runId: string) => `svc-${runId.replace('_', '-')}`;
/** The sandbox's own records, logged when a test fails (what the pod said, how it ended). */
function sandboxTrace(runId: string): string {
  const dir = join(svc.config.dataDir, 'sandboxes', runId);
  return ['stdout.log', 'stderr.log', 'exit.json', 'gateway.json', 'supervisor.log', 'finalize/exit.json']
    .map((file) => `${file}: ${existsSync(join(dir, file)) ? readFileSync(join(dir, file), 'utf8').slice(-1500) : '-'}`)
    .join('\n');
}

/** The run once it ended; one still going after `ms` fails the test with its sandbox's trace and its pod. */
async function ended(runId: string, ms = 120_000) {
  try {
    return await waitForRunState(svc, runId, undefined, ms);
  } catch (error) {
    const pod = kube.pods.get(podOf(runId));
    const seen = pod ? JSON.stringify({ status: pod.pod.status, container: pod.containerId }) : 'gone';
    throw new Error(`${(error as Error).message}\n${sandboxTrace(runId)}\npod: ${seen}`);
  }
}

test.serial('a run in a pod commits, hands its workspace back, and svc pushes it and opens the PR', async (t) => {
  const project = await register('podded');
  const runId = await dispatch({
    project,
    prompt: [
      'echo uid=$(id -u) caps=$(awk \'$1=="CapEff:" {print $2}\' /proc/self/status)',
      'echo on stderr >&2',
      'echo model-token=$MODEL_TOKEN',
      'printf "two\\n" >> src/app.txt',
      'git add -A && git commit -q -m "work from a pod"',
    ].join('\n'),
  });
  const run = await ended(runId);
  if (run.state !== 'succeeded') t.log(JSON.stringify(await events(runId), null, 1).slice(0, 6000));
  t.is(run.state, 'succeeded', JSON.stringify(run));
  t.is(run.sandboxRunId, `pod:svc-runs/${podOf(runId)}`);
  t.like(run, { commitsAhead: 1, filesChanged: 1, insertions: 1, deletions: 0, prState: 'open' });
  const stdout = await runStdout(svc, runId);
  // The run's own unprivileged uid, as its workspace on the worker is (a second wall between runs on a node).
  const uid = statSync(join(svc.config.dataDir, 'workspaces', runId)).uid;
  t.not(uid, 0);
  t.true(stdout.includes(`uid=${uid} caps=0000000000000000`), stdout.join('\n'));
  t.true(stdout.includes('model-token=sk-from-a-secret'), 'the Secret reached the pod by reference');
  const manifest = kube.created.find((pod) => pod.metadata!.name === podOf(runId))!;
  t.deepEqual(manifest.spec!.nodeSelector, { 'svc.dev/pool': 'agents' });
  t.false(JSON.stringify(manifest).includes('sk-from-a-secret'), 'no secret value in the manifest');
  const all = await events(runId);
  t.true(all.some((event) => event.stream === 'stderr' && JSON.stringify(event.payload).includes('on stderr')));
  t.like(all.find((event) => event.kind === 'sandbox.started')?.payload, { isolation: 'kubernetes' });
  t.is(
    github.git(join(github.root, 'acme', 'podded.git'), 'log', '-1', '--format=%s', `svc/${runId}`),
    'work from a pod',
  );
  t.like(forge.pulls.at(-1), { head: `svc/${runId}`, state: 'open' });
  // Both pods (agent and finalizer) were created, and are deleted once their output is copied.
  t.deepEqual(
    kube.created.map((pod) => pod.metadata!.name).filter((name) => name!.startsWith(podOf(runId))),
    [podOf(runId), `${podOf(runId)}-finalize`],
  );
  await waitFor(
    async () => !kube.pods.has(podOf(runId)) && !kube.pods.has(`${podOf(runId)}-finalize`),
    'pods deleted',
    20_000,
  );
});

test.serial('cancel stops the pod; it hands its workspace back first and is deleted', async (t) => {
  const runId = await dispatch({ prompt: 'echo started\nsleep 120' });
  await waitForRunState(svc, runId, ['running']);
  await waitFor(async () => (await runStdout(svc, runId)).includes('started'), 'the first line', 20_000);
  const cancel = await svc.request('POST', `/runs/${runId}/cancel`, { body: { reason: 'enough' } });
  t.is(cancel.status, 200);
  const run = await ended(runId);
  t.is(run.state, 'cancelled');
  await waitFor(async () => !kube.pods.has(podOf(runId)), 'pod deleted', 20_000).catch((error: Error) => {
    throw new Error(`${error.message}\n${sandboxTrace(runId)}`);
  });
});

test.serial("an agent that outgrows its project's memory limit is oom_killed", async (t) => {
  const project = await register('small');
  const runId = await dispatch({ project, prompt: 'echo filling\nexec tail /dev/zero' });
  const run = await ended(runId);
  t.is(run.state, 'failed');
  t.is(run.failureReason, 'oom_killed');
  const manifest = kube.created.find((pod) => pod.metadata!.name === podOf(runId))!;
  t.deepEqual(manifest.spec!.containers[0]!.resources!.limits, { memory: '64Mi' });
});

test.serial("a project's agentImage the cluster cannot pull is spawn_failed, with the reason", async (t) => {
  const project = await register('imageless');
  const runId = await dispatch({ project, prompt: 'echo never' });
  const run = await ended(runId);
  t.is(run.state, 'failed');
  t.is(run.failureReason, 'spawn_failed');
  t.regex(JSON.stringify(await events(runId)), /ErrImagePull.*svc-no-such-image/, 'an event names the image');
});

test.serial('a message steered mid-run reaches the agent in its pod through its inbox', async (t) => {
  const runId = await dispatch({ agent: 'poller', prompt: 'wait for a message' });
  await waitForRunState(svc, runId, ['running']);
  await waitFor(async () => (await runStdout(svc, runId)).includes('ready'), 'the poller', 20_000);
  const steer = await svc.request('POST', `/runs/${runId}/steer`, { body: { body: 'turn left' } });
  t.is(steer.status, 200, steer.text);
  const run = await ended(runId);
  t.is(run.state, 'succeeded', sandboxTrace(runId));
  t.true((await runStdout(svc, runId)).some((line) => line.startsWith('got ') && line.includes('turn left')));
});

test.serial("a pod the kubelet evicts is evicted, with the kubelet's message", async (t) => {
  const runId = await dispatch({ prompt: 'echo started\nsleep 120' });
  await waitForRunState(svc, runId, ['running']);
  await waitFor(async () => (await runStdout(svc, runId)).includes('started'), 'the first line', 20_000);
  await kube.evict(podOf(runId), 'The node was low on resource: ephemeral-storage.');
  const run = await ended(runId);
  t.is(run.state, 'failed');
  t.is(run.failureReason, 'evicted');
  t.regex(JSON.stringify(await events(runId)), /evicted: The node was low on resource: ephemeral-storage/);
});

test.serial("a pod deleted behind svc's back is sandbox_run_lost", async (t) => {
  const runId = await dispatch({ prompt: 'echo started\nsleep 120' });
  await waitForRunState(svc, runId, ['running']);
  await waitFor(async () => (await runStdout(svc, runId)).includes('started'), 'the first line', 20_000);
  await kube.vanish(podOf(runId));
  const run = await ended(runId);
  t.is(run.state, 'failed');
  t.is(run.failureReason, 'sandbox_run_lost');
});

test.serial(
  'an API server that stops answering about a live run makes it sandbox_unreachable; the reconciler deletes its pod',
  async (t) => {
    const runId = await dispatch({ prompt: 'echo started\nsleep 60' });
    await waitForRunState(svc, runId, ['running']);
    await waitFor(async () => (await runStdout(svc, runId)).includes('started'), 'the first line', 20_000);
    await kube.halt();
    const run = await ended(runId);
    t.is(run.state, 'failed');
    t.is(run.failureReason, 'sandbox_unreachable');
    // The pod outlived the API's silence: once the API is back, a pass of the reconciler deletes it.
    await kube.listen();
    t.true(kube.pods.has(podOf(runId)), 'the pod is still there');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await reconcilerPass();
    await waitFor(async () => !kube.pods.has(podOf(runId)), 'pod swept', 30_000);
    t.pass();
  },
);

test.serial(
  "a run past its project's maxConcurrentRuns waits queued, says why, and starts when a slot frees",
  async (t) => {
    const project = await register('capped');
    const first = await dispatch({ project, prompt: 'echo first\nsleep 60' });
    const second = await dispatch({ project, prompt: 'echo second' });
    const waiting = await waitFor(async () => {
      const run = (await svc.request('GET', `/runs/${second}`)).body.run;
      return run.queueReason ? run : null;
    }, 'the second run says why it waits');
    t.is(waiting.state, 'queued');
    t.regex(waiting.queueReason, /has 1 of its 1 concurrent runs \(admission\.maxConcurrentRuns/);
    t.false(kube.pods.has(podOf(second)), 'no pod for a run that waits');
    await svc.request('POST', `/runs/${first}/cancel`, { body: { reason: 'make room' } });
    await ended(first);
    const run = await ended(second);
    t.is(run.state, 'succeeded', sandboxTrace(second));
    t.is(run.queueReason, null);
  },
);

test.serial('svc pods the cluster has not started count against SVC_ADMISSION_PENDING_PODS', async (t) => {
  kube.holdScheduling();
  t.teardown(() => kube.schedule());
  const held = [await dispatch({ prompt: 'echo one' }), await dispatch({ prompt: 'echo two' })];
  // These two runs' own pods: an earlier test's pod still being deleted must not stand in for one.
  await waitFor(async () => held.every((runId) => kube.pods.has(podOf(runId))), 'two pending pods', 20_000);
  const refused = await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo three' } });
  t.is(refused.status, 429, refused.text);
  t.like(refused.body.error, { code: 'runtime_admission_rejected', hint: 'cluster_pending_saturated' });
  t.like((await svc.request('GET', '/instance')).body, { runtime: 'kubernetes', admission: { maxPendingPods: 2 } });
  await kube.schedule();
  for (const runId of held) t.is((await ended(runId)).state, 'succeeded', sandboxTrace(runId));
});

test.serial(
  "a project's own pod settings: its node selector and tolerations, a Secret the operator allows",
  async (t) => {
    const project = await register('scheduled');
    const runId = await dispatch({ project, prompt: 'echo team=$TEAM_KEY' });
    const run = await ended(runId);
    t.is(run.state, 'succeeded', sandboxTrace(runId));
    t.true((await runStdout(svc, runId)).includes('team=team-secret'));
    const spec = kube.created.find((pod) => pod.metadata!.name === podOf(runId))!.spec!;
    // The operator's node pool wins over the project's; the tolerations add up.
    t.deepEqual(spec.nodeSelector, { 'svc.dev/team': 'search', 'svc.dev/pool': 'agents' });
    t.deepEqual(
      spec.tolerations!.map((toleration) => toleration.key),
      ['svc.dev/agents', 'svc.dev/gpu'],
    );
  },
);

test.serial('a project naming a Secret the operator does not let projects use is refused at dispatch', async (t) => {
  const project = await register('overreaching');
  const refused = await svc.request('POST', '/runs', { body: { agent: 'shell', project, prompt: 'echo $TEAM_KEY' } });
  t.is(refused.status, 422, refused.text);
  t.like(refused.body.error, { code: 'svc_config_invalid' });
  t.regex(refused.body.error.message, /Secret "model-key"/);
});
