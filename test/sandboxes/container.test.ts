// The container backend end to end: a real Podman serving the Docker Engine API, the agent image
// built from Debian's packages, and the same workflow as every backend. A run's agent commits in
// its container, the finalizer (in a container of its own) hands the branch over, svc pushes and
// opens the PR; cancel stops the container; a memory limit hit is oom_killed; a missing image is
// spawn_failed; mid-run steering reaches the agent through its callback routes.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { startContainerEngine, waitUntilRemoved, type TestContainerEngine } from '../support/container-engine.ts';
import { backendRuns, pollerAgentsFile } from '../support/backend-runs.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { waitFor } from '../support/processes.ts';
import { runStdout, startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

const github = new GitHubStandIn();
const forge = new PullRequestsStandIn();
let engine: TestContainerEngine;
let svc: TestStack;

const agentsFile = pollerAgentsFile();

test.before(async () => {
  engine = await startContainerEngine();
  await forge.start();
  github.createRepo('acme', 'boxed', { files: { 'src/app.txt': 'one\n' } });
  github.createRepo('acme', 'small', { files: { '.svc/config.yaml': 'resources:\n  limits:\n    memoryMiB: 64\n' } });
  github.createRepo('acme', 'imageless', {
    files: { '.svc/config.yaml': 'agentImage: localhost/svc-no-such-image:1\n' },
  });
  svc = await startTestStack({
    env: {
      ...engine.env,
      SVC_AGENTS_FILE: agentsFile,
      SVC_GIT_TOKEN: 'ghp_test',
      SVC_GITHUB_API_URL: forge.url,
      SVC_FINALIZE_TIMEOUT_MS: '60000',
      SVC_CONTAINER_UNREACHABLE_MS: '3000',
      SVC_RECONCILE_STALE_AFTER_MS: '1000',
      // Allowed, so the run reaches the engine, which does not have it.
      SVC_AGENT_IMAGES: 'localhost/svc-no-such-image:1',
    },
  });
});
test.after.always(async () => {
  await svc?.stop();
  await forge.stop();
  await engine?.stop();
});

const { register, dispatch, events, reconcilerPass } = backendRuns(() => svc);

test.serial('a run in a container commits, hands its branch over, and svc pushes it and opens the PR', async (t) => {
  const project = await register('boxed');
  const runId = await dispatch({
    project,
    prompt: [
      'echo uid=$(id -u) caps=$(awk \'$1=="CapEff:" {print $2}\' /proc/self/status)',
      'echo node=$(node --version)',
      'printf "two\\n" >> src/app.txt',
      'git add -A && git commit -q -m "work from a container"',
    ].join('\n'),
  });
  const run = await waitForRunState(svc, runId);
  t.is(run.state, 'succeeded', JSON.stringify(run));
  t.regex(run.sandboxRunId, /^container:[0-9a-f]{12}$/);
  t.like(run, { commitsAhead: 1, filesChanged: 1, insertions: 1, deletions: 0, prState: 'open' });
  const stdout = await runStdout(svc, runId);
  const facts = stdout.find((line) => line.startsWith('uid='));
  t.regex(facts ?? '', /^uid=\d+ caps=0000000000000000$/);
  t.not(facts, 'uid=0 caps=0000000000000000', 'the agent is not root');
  t.true(stdout.includes('node=v24.21.0') || stdout.some((line) => /^node=v24\./.test(line)));
  const started = (await events(runId)).find((event) => event.kind === 'sandbox.started');
  t.like(started?.payload, { isolation: 'container', image: 'localhost/svc-agent:latest' });
  t.is(
    github.git(join(github.root, 'acme', 'boxed.git'), 'log', '-1', '--format=%s', `svc/${runId}`),
    'work from a container',
  );
  t.like(forge.pulls.at(-1), { head: `svc/${runId}`, state: 'open' });
  // Both containers (agent and finalizer) are removed once their output is copied.
  for (const name of [`svc-${runId}`, `svc-${runId}-finalize`]) await waitUntilRemoved(engine.engine, name, 20_000);
  t.pass();
});

test.serial('an agent quiet for longer than any idle timeout keeps its output and its run', async (t) => {
  // Longer than Node's 5 s idle socket timeout and than this stack's 3 s unreachable bound.
  const runId = await dispatch({ prompt: 'echo before\nsleep 7\necho after' });
  const run = await waitForRunState(svc, runId, undefined, 60_000);
  t.is(run.state, 'succeeded', JSON.stringify(run));
  t.deepEqual(await runStdout(svc, runId), ['before', 'after']);
});

test.serial("output written while the engine's API restarts is copied once; the run goes on", async (t) => {
  const runId = await dispatch({ prompt: 'echo before\nsleep 3\necho during\nsleep 2\necho after' });
  await waitForRunState(svc, runId, ['running']);
  await waitFor(async () => (await runStdout(svc, runId)).includes('before'), 'the first line', 20_000);
  await engine.restart();
  const run = await waitForRunState(svc, runId, undefined, 60_000);
  t.is(run.state, 'succeeded', JSON.stringify(run));
  t.deepEqual(await runStdout(svc, runId), ['before', 'during', 'after']);
});

test.serial('cancel stops the container', async (t) => {
  const runId = await dispatch({ prompt: 'echo started\nsleep 120' });
  await waitForRunState(svc, runId, ['running']);
  const cancel = await svc.request('POST', `/runs/${runId}/cancel`, { body: { reason: 'enough' } });
  t.is(cancel.status, 200);
  const run = await waitForRunState(svc, runId, undefined, 60_000);
  t.is(run.state, 'cancelled');
  const started = Date.now();
  const stoppedAt = JSON.parse((await svc.request('GET', `/runs/${runId}`)).text).run.endedAt;
  t.truthy(stoppedAt);
  // The engine removes it once its output is copied, which may finish just after the run ended.
  await waitUntilRemoved(engine.engine, `svc-${runId}`, 20_000);
  t.true(Date.now() - started < 20_000);
});

test.serial("an agent that outgrows its project's memory limit is oom_killed", async (t) => {
  const project = await register('small');
  const runId = await dispatch({ project, prompt: 'echo filling\nexec tail /dev/zero' });
  const run = await waitForRunState(svc, runId);
  t.is(run.state, 'failed');
  t.is(run.failureReason, 'oom_killed');
  t.true((await events(runId)).some((event) => event.kind === 'sandbox.oom_kill'));
});

test.serial("a project's agentImage that the engine does not have is spawn_failed, with the reason", async (t) => {
  const project = await register('imageless');
  const runId = await dispatch({ project, prompt: 'echo never' });
  const run = await waitForRunState(svc, runId);
  t.is(run.state, 'failed');
  t.is(run.failureReason, 'spawn_failed');
  t.regex(JSON.stringify(await events(runId)), /svc-no-such-image/, 'an event names the missing image');
});

test.serial('a message steered mid-run reaches the agent in its container through its inbox', async (t) => {
  const runId = await dispatch({ agent: 'poller', prompt: 'wait for a message' });
  await waitForRunState(svc, runId, ['running']);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const steer = await svc.request('POST', `/runs/${runId}/steer`, { body: { body: 'turn left' } });
  t.is(steer.status, 200, steer.text);
  const run = await waitForRunState(svc, runId);
  t.is(run.state, 'succeeded', JSON.stringify(run));
  t.true((await runStdout(svc, runId)).some((line) => line.startsWith('got ') && line.includes('turn left')));
});

test.serial("a container removed behind svc's back is sandbox_run_lost", async (t) => {
  const runId = await dispatch({ prompt: 'echo started\nsleep 120' });
  await waitForRunState(svc, runId, ['running']);
  await engine.engine.remove(`svc-${runId}`);
  const run = await waitForRunState(svc, runId, undefined, 60_000);
  t.is(run.state, 'failed');
  t.is(run.failureReason, 'sandbox_run_lost');
});

test.serial(
  'an engine that stops answering about a live run makes it sandbox_unreachable; the reconciler sweeps its container',
  async (t) => {
    const runId = await dispatch({ prompt: 'echo started\nsleep 60' });
    await waitForRunState(svc, runId, ['running']);
    t.teardown(() => execFileSync('podman', ['rm', '-f', `svc-${runId}`], { stdio: 'ignore' }));
    await engine.halt();
    const run = await waitForRunState(svc, runId, undefined, 60_000);
    t.is(run.state, 'failed');
    t.is(run.failureReason, 'sandbox_unreachable');
    // The container outlived its engine's API (Podman's conmon keeps it): once the engine is
    // back, a pass of the reconciler removes it.
    await engine.restart();
    t.truthy(await engine.engine.inspect(`svc-${runId}`), 'the container is still there');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await reconcilerPass();
    await waitUntilRemoved(engine.engine, `svc-${runId}`, 30_000);
    t.pass();
  },
);
