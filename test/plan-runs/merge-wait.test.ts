// The merge wait: a child's PR left open past the merge budget fails the plan-run with
// child_pr_merge_timeout; resuming waits on the same PR (no new run) and goes on once it merges.
// A PR closed without merging fails the plan-run with pr_closed_without_merge.
import test from 'ava';
import { planFixture } from '../support/plan-fixture.ts';
import { waitFor } from '../support/processes.ts';
import { startTestStack } from '../support/stack.ts';

test('merge timeout, resume on the same PR, and a PR closed unmerged', async (t) => {
  const fixture = await planFixture('acme', 'slow-review', ['Needs review', 'Rejected'], { reviewer: false });
  const svc = await startTestStack({ env: { ...fixture.env, SVC_PLAN_RUN_MERGE_TIMEOUT_MS: '3000' } });
  t.teardown(async () => {
    fixture.stopReviewer();
    await fixture.forge.stop();
    await svc.stop();
  });
  const project = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/slow-review' } }))
    .body.project.id;
  const plan = async (id: string, states: string[]) =>
    waitFor(
      async () => {
        const { body } = await svc.request('GET', `/plan-runs/${id}`);
        return states.includes(body.planRun.state) ? body : undefined;
      },
      `plan-run ${id} in ${states}`,
      90_000,
    );

  const [review, rejected] = fixture.seeds as [string, string];
  const created = (
    await svc.request('POST', '/plan-runs', {
      body: { project, agent: 'shell', issues: [review], promptTemplate: fixture.template },
    })
  ).body;
  const timedOut = await plan(created.planRun.id, ['failed', 'succeeded']);
  t.like(timedOut.planRun, { state: 'failed', failureReason: 'child_pr_merge_timeout' });
  t.like(timedOut.children[0], { state: 'failed', failureReason: 'child_pr_merge_timeout' });
  const runId = timedOut.children[0].runId;
  t.like(timedOut.runs[0], { id: runId, state: 'succeeded', prState: 'open' });

  // The PR is merged while the plan-run stands failed; resume waits on that same PR.
  const pull = fixture.forge.pulls.find((candidate) => candidate.head === `svc/${runId}`)!;
  fixture.github.mergeBranch('acme', 'slow-review', pull.head);
  fixture.forge.merge(pull.number);
  const resumed = await svc.request('POST', `/plan-runs/${created.planRun.id}/resume`, { body: {} });
  t.like(resumed.body, {
    planRun: { state: 'running' },
    resumedChild: { seq: 1, runId },
    reason: 'child_pr_merge_timeout',
  });
  const done = await plan(created.planRun.id, ['succeeded', 'failed']);
  t.is(done.planRun.state, 'succeeded', JSON.stringify(done.planRun) + JSON.stringify(done.children));
  t.like(done.children[0], { state: 'merged', runId });
  t.is(done.runs.length, 1, 'no second run');

  const second = (
    await svc.request('POST', '/plan-runs', {
      body: { project, agent: 'shell', issues: [rejected], promptTemplate: fixture.template },
    })
  ).body;
  const open = await waitFor(
    async () => fixture.forge.pulls.find((candidate) => candidate.state === 'open'),
    'the second PR',
    60_000,
  );
  fixture.forge.close(open.number);
  const closed = await plan(second.planRun.id, ['failed', 'succeeded']);
  t.like(closed.planRun, { state: 'failed', failureReason: 'pr_closed_without_merge' });
});
