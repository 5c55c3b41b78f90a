// The run's tail for real: the in-sandbox finalizer pushes through git (to local bare repositories
// standing in for GitHub), svc measures the change, opens the PR on a REST stand-in and follows it
// to merged; and every finalize failure reason from a real condition.
import test from 'ava';
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { mintRunToken } from '../../core/run-token.ts';
import { pullRequestWorkflowId } from '../../core/run-workflows.ts';
import { waitFor } from '../support/processes.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { runEvents, startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

const github = new GitHubStandIn();
const forge = new PullRequestsStandIn();
let svc: TestStack;

function rejectPushes(name: string, message: string, except = '^$') {
  const hook = join(github.root, 'acme', `${name}.git`, 'hooks', 'pre-receive');
  writeFileSync(
    hook,
    `#!/bin/sh\nwhile read old new ref; do case "$ref" in *svc/rescue/*) ;; *) if ! echo "$ref" | grep -q ` +
      `'${except}'; then echo "${message}" >&2; exit 1; fi;; esac; done\nexit 0\n`,
  );
  chmodSync(hook, 0o755);
}

test.before(async () => {
  await forge.start();
  for (const name of ['work', 'nothing', 'unchanged', 'dirty', 'protected', 'broken'])
    github.createRepo('acme', name, { files: { 'src/app.txt': 'one\ntwo\n' } });
  rejectPushes('protected', 'remote: error: GH006: Protected branch update failed for refs/heads/svc.');
  rejectPushes('broken', 'remote: fatal: disk quota exceeded');
  svc = await startTestStack({
    env: {
      SVC_GIT_TOKEN: 'ghp_test',
      SVC_GITHUB_API_URL: forge.url,
      SVC_PR_POLL_MIN_MS: '300',
      SVC_PR_POLL_MAX_MS: '600',
      SVC_FINALIZE_TIMEOUT_MS: '60000',
    },
  });
});
test.after.always(async () => {
  await svc?.stop();
  await forge.stop();
});

const register = async (name: string) =>
  (await svc.request('POST', '/projects', { body: { gitUrl: `https://github.com/acme/${name}` } })).body.project
    .id as string;
const dispatch = async (project: string, prompt: string) =>
  (await svc.request('POST', '/runs', { body: { agent: 'shell', project, prompt } })).body.run.id as string;
const kinds = async (runId: string) => (await runEvents(svc, runId)).map((event) => event.kind);

test.serial(
  'a committed change is pushed to svc/<run id>, measured, opened as a PR and followed until merged',
  async (t) => {
    const project = await register('work');
    const runId = await dispatch(
      project,
      'printf "three\\nfour\\n" >> src/app.txt\necho new > src/new.txt\ngit add -A\ngit commit -q -m "agent work"',
    );
    const run = await waitForRunState(svc, runId);
    t.is(run.state, 'succeeded', JSON.stringify(run));
    t.like(run, { commitsAhead: 1, filesChanged: 2, insertions: 3, deletions: 0, prState: 'open' });
    t.is(
      github.git(join(github.root, 'acme', 'work.git'), 'log', '-1', '--format=%s', `svc/${runId}`),
      'agent work',
      'the branch is on the remote',
    );
    t.is(forge.pulls.length, 1);
    t.like(forge.pulls[0], { head: `svc/${runId}`, base: 'main', state: 'open' });
    t.is(run.prUrl, 'https://github.com/acme/work/pull/1');
    t.true((await kinds(runId)).includes('reap.pr_opened'));
    t.true((await kinds(runId)).includes('pr.follow_started'));

    // The run's workflow is done with the run; the PR is followed by a workflow of its own.
    const connection = await Connection.connect({ address: svc.stack.temporalAddress });
    t.teardown(() => connection.close());
    const client = new Client({ connection });
    const runWorkflow = client.workflow.getHandle(runId);
    t.like(await runWorkflow.result(), { runId, state: 'succeeded', prUrl: run.prUrl, prState: 'open' });
    t.is((await runWorkflow.describe()).status.name, 'COMPLETED');
    const following = client.workflow.getHandle(pullRequestWorkflowId(runId));
    const described = await following.describe();
    t.is(described.status.name, 'RUNNING', 'the PR is followed after the run workflow closed');
    t.is(described.type, 'pullRequestWorkflow');
    t.is(described.parentExecution?.workflowId, runId);
    t.like(described.memo, { runId, prUrl: run.prUrl });

    forge.merge(1);
    const merged = await waitFor(async () => {
      const current = (await svc.request('GET', `/runs/${runId}`)).body.run;
      return current.prState === 'merged' ? current : undefined;
    }, 'svc to see the merge');
    t.truthy(merged.prMergedAt);
    t.true((await kinds(runId)).includes('pr.state_changed'));
    t.like(await following.result(), { runId, prState: 'merged', prMergedAt: merged.prMergedAt });
    // The lifecycle stream says so too: a dashboard holding it sees the merge of an ended run.
    const hooks = (await svc.request('GET', '/events?limit=1000')).body.events
      .filter((event: { runId: string }) => event.runId === runId)
      .map((event: { hook: string }) => event.hook);
    t.deepEqual(hooks, ['run_dispatched', 'run_started', 'pre_reap', 'branch_pushed', 'post_reap', 'pr_merged']);
  },
);

test.serial('no commits on a fresh branch: succeeded with an empty change, no push, no PR', async (t) => {
  const project = await register('nothing');
  const runId = await dispatch(project, 'cat src/app.txt');
  const run = await waitForRunState(svc, runId);
  t.like(run, { state: 'succeeded', failureReason: null, commitsAhead: 0, filesChanged: 0, prUrl: null });
  t.true((await kinds(runId)).includes('reap.empty_push'));
  t.false(github.git(join(github.root, 'acme', 'nothing.git'), 'branch', '--list', `svc/${runId}`).includes(runId));
});

test.serial('no commits on a run dispatched onto an existing ref is no_changes', async (t) => {
  const project = await register('unchanged');
  const runId = (
    await svc.request('POST', '/runs', { body: { agent: 'shell', project, prompt: 'cat src/app.txt', ref: 'main' } })
  ).body.run.id as string;
  t.like(await waitForRunState(svc, runId), {
    state: 'failed',
    failureReason: 'no_changes',
    commitsAhead: 0,
    prUrl: null,
  });
});

test.serial('uncommitted work is dropped_commit', async (t) => {
  const project = await register('dirty');
  const runId = await dispatch(project, 'echo forgotten > src/untracked.txt');
  t.like(await waitForRunState(svc, runId), { state: 'failed', failureReason: 'dropped_commit', commitsAhead: 0 });
});

test.serial('a push the remote refuses on policy is push_rejected_policy, and the work is salvaged', async (t) => {
  const project = await register('protected');
  const runId = await dispatch(project, 'echo change >> src/app.txt\ngit commit -qam "blocked work"');
  const run = await waitForRunState(svc, runId);
  t.like(run, { state: 'failed', failureReason: 'push_rejected_policy', salvageRef: `svc/rescue/${runId}` });
  t.true(existsSync(run.salvagePath), 'a bundle of the work is kept');
  github.git(join(github.root, 'acme', 'protected.git'), 'bundle', 'verify', run.salvagePath);
  t.is(
    github.git(join(github.root, 'acme', 'protected.git'), 'log', '-1', '--format=%s', `svc/rescue/${runId}`),
    'blocked work',
  );
  t.true((await kinds(runId)).includes('reap.workspace_salvaged'));
});

test.serial('any other push failure is finalize_failed', async (t) => {
  const project = await register('broken');
  const runId = await dispatch(project, 'echo change >> src/app.txt\ngit commit -qam "doomed"');
  t.like(await waitForRunState(svc, runId), { state: 'failed', failureReason: 'finalize_failed' });
});

test.serial('a sandbox that never posts its result is finalize_unposted', async (t) => {
  // The sandbox is told a dead address for svc: its finalizer can never report.
  const isolated = await startTestStack({
    env: { SVC_API_URL: 'http://127.0.0.1:9', SVC_FINALIZE_TIMEOUT_MS: '2000' },
  });
  t.teardown(() => isolated.stop());
  github.createRepo('acme', 'silent');
  const project = (await isolated.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/silent' } }))
    .body.project.id;
  const runId = (
    await isolated.request('POST', '/runs', {
      body: { agent: 'shell', project, prompt: 'echo x >> README.md\ngit commit -qam x' },
    })
  ).body.run.id;
  t.like(await waitForRunState(isolated, runId), { state: 'failed', failureReason: 'finalize_unposted' });
});

test.serial(
  'the finalize wire: intent and results only for the run itself, validated, and unknown without an intent',
  async (t) => {
    const runId = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'sleep 30' } })).body.run.id;
    await waitForRunState(svc, runId, ['running']);
    const token = mintRunToken(svc.token, runId);
    t.deepEqual((await svc.request('GET', `/runs/${runId}/finalize-intent`, { token })).body, { intent: null });
    const result = {
      pushed: false,
      commitsAhead: 0,
      emptyPush: true,
      dirty: false,
      events: [],
      prBranch: null,
      stages: [],
    };
    t.deepEqual(
      (
        await svc.request('POST', `/runs/${runId}/finalize-result`, {
          token,
          body: { version: 1, attemptId: 'a1', result },
        })
      ).body,
      { outcome: 'unknown' },
    );
    for (const body of [
      { version: 2, attemptId: 'a1', result },
      { version: 1, attemptId: '', result },
      { version: 1, attemptId: 'a1', result: { ...result, stages: [{ stage: 'nope', status: 'ok' }] } },
    ]) {
      t.is((await svc.request('POST', `/runs/${runId}/finalize-result`, { token, body })).status, 400);
    }
    t.deepEqual(
      (await svc.request('POST', `/runs/${runId}/git-credential`, { token })).status,
      404,
      'a run without a project has nothing to push to',
    );
    await svc.request('POST', `/runs/${runId}/cancel`);
  },
);

test.serial(
  'continue cuts the new workspace from the parent branch; replicate re-dispatches the parent from the base',
  async (t) => {
    github.createRepo('acme', 'followup');
    const project = await register('followup');
    const parent = await waitForRunState(
      svc,
      await dispatch(project, 'echo a > a.txt\ngit add a.txt\ngit commit -qm a'),
    );
    t.like(parent, { state: 'succeeded', commitsAhead: 1 });

    const continued = await svc.request('POST', '/runs', {
      body: {
        agent: 'shell',
        prompt: 'test -f a.txt\necho b > b.txt\ngit add b.txt\ngit commit -qm b',
        continueFromRunId: parent.id,
      },
    });
    t.is(continued.status, 201, JSON.stringify(continued.body));
    t.like(continued.body.run, { parentRunId: parent.id, cloneKind: 'continue', projectId: project });
    t.like(await waitForRunState(svc, continued.body.run.id), { state: 'succeeded', commitsAhead: 2, filesChanged: 2 });

    const replicated = await svc.request('POST', '/runs', { body: { cloneFromRunId: parent.id } });
    t.is(replicated.status, 201, JSON.stringify(replicated.body));
    t.like(replicated.body.run, {
      parentRunId: parent.id,
      cloneKind: 'replicate',
      projectId: project,
      agentName: 'shell',
      prompt: parent.prompt,
    });
    t.like(await waitForRunState(svc, replicated.body.run.id), { state: 'succeeded', commitsAhead: 1 });

    const noBranch = await waitForRunState(svc, await dispatch(project, 'true'));
    t.is(
      (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'x', continueFromRunId: noBranch.id } }))
        .status,
      400,
    );
    t.is((await svc.request('POST', '/runs', { body: { cloneFromRunId: 'run_000000000000' } })).status, 404);
    t.is(
      (await svc.request('POST', '/runs', { body: { prompt: 'x' } })).status,
      400,
      'without a parent, agent is required',
    );
  },
);
