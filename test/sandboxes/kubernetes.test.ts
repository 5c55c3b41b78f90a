// The Kubernetes backend end to end, against the stand-in API (test/support/kube-stand-in.ts: the
// Pod endpoints svc calls, every manifest validated against the official schema and the restricted
// Pod Security Standard, each pod's container run for real on Podman on an internal network that
// reaches only the host). A run's agent commits in its pod, hands its workspace back through the
// run's gateway, the finalizer (a pod of its own) hands the branch over, svc pushes and opens the
// PR; cancel stops the pod; OOM, eviction, a vanished pod and a silent API are the run's reasons.
import test from 'ava';
import { join } from 'node:path';
import { startContainerEngine, type TestContainerEngine } from '../support/container-engine.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { KubeStandIn } from '../support/kube-stand-in.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { waitFor } from '../support/processes.ts';
import { runStdout, startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

const github = new GitHubStandIn();
const forge = new PullRequestsStandIn();
let engine: TestContainerEngine;
let kube: KubeStandIn;
let svc: TestStack;

test.before(async () => {
  engine = await startContainerEngine();
  kube = new KubeStandIn({ engine: engine.address, secrets: { 'model-key': { token: 'sk-from-a-secret' } } });
  await kube.start();
  await forge.start();
  github.createRepo('acme', 'podded', { files: { 'src/app.txt': 'one\n' } });
  github.createRepo('acme', 'small', { files: { '.svc/config.yaml': 'resources:\n  limits:\n    memoryMiB: 64\n' } });
  github.createRepo('acme', 'imageless', {
    files: { '.svc/config.yaml': 'agentImage: localhost/svc-no-such-image:1\n' },
  });
  svc = await startTestStack({
    env: {
      SVC_SANDBOX: 'kubernetes',
      KUBECONFIG: kube.kubeconfig,
      SVC_KUBERNETES_GATEWAY_HOST: kube.gatewayHost,
      SVC_GIT_TOKEN: 'ghp_test',
      SVC_GITHUB_API_URL: forge.url,
      SVC_FINALIZE_TIMEOUT_MS: '60000',
      SVC_KUBERNETES_UNREACHABLE_MS: '3000',
    },
  });
});
test.after.always(async () => {
  await svc?.stop();
  await forge.stop();
  await kube?.stop();
  await engine?.stop();
});

const register = async (name: string) =>
  (await svc.request('POST', '/projects', { body: { gitUrl: `https://github.com/acme/${name}` } })).body.project
    .id as string;
const dispatch = async (body: Record<string, unknown>) => {
  const response = await svc.request('POST', '/runs', { body: { agent: 'shell', ...body } });
  if (response.status !== 201) throw new Error(`dispatch: ${response.status} ${response.text}`);
  return response.body.run.id as string;
};
const events = async (runId: string) =>
  (await svc.request('GET', `/runs/${runId}/events?follow=0`)).text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { kind: string; stream?: string; payload: any });
const podOf = (runId: string) => `svc-${runId.replace('_', '-')}`;

test.serial('a run in a pod commits, hands its workspace back, and svc pushes it and opens the PR', async (t) => {
  const project = await register('podded');
  const runId = await dispatch({
    project,
    prompt: [
      'echo uid=$(id -u) caps=$(awk \'$1=="CapEff:" {print $2}\' /proc/self/status)',
      'echo on stderr >&2',
      'printf "two\\n" >> src/app.txt',
      'git add -A && git commit -q -m "work from a pod"',
    ].join('\n'),
  });
  const run = await waitForRunState(svc, runId, undefined, 120_000);
  if (run.state !== 'succeeded') t.log(JSON.stringify(await events(runId), null, 1).slice(0, 6000));
  t.is(run.state, 'succeeded', JSON.stringify(run));
  t.is(run.sandboxRunId, `pod:svc-runs/${podOf(runId)}`);
  t.like(run, { commitsAhead: 1, filesChanged: 1, insertions: 1, deletions: 0, prState: 'open' });
  t.true((await runStdout(svc, runId)).includes('uid=1000 caps=0000000000000000'));
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
