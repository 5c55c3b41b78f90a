// Cancelling a plan-run whose child has ended with its PR open: the child's run workflow has closed
// and handed the PR over to `<run id>-pr`, which the plan-run's cancel reaches (it stops the PR's loop).
import test, { type ExecutionContext } from 'ava';
import { Client, Connection } from '@temporalio/client';
import { pullRequestWorkflowId } from '../../core/run-workflows.ts';
import { startPlanStack, type PlanFixture } from '../support/plan-fixture.ts';
import { runEvents, type TestStack } from '../support/stack.ts';
import { waitFor } from '../support/processes.ts';

let fixture: PlanFixture;
let svc: TestStack;
let project: string;
let stop: () => Promise<void> = async () => {};

test.before(async () => {
  ({ fixture, svc, project, stop } = await startPlanStack('acme', 'unreviewed', { reviewer: false }));
});
test.after.always(() => stop());

/** A plan-run of one seed whose child has ended with its PR open, and a Temporal client. */
async function waitingForMerge(t: ExecutionContext, seed: string) {
  const created = await svc.request('POST', '/plan-runs', {
    body: { project, agent: 'shell', issues: [seed], promptTemplate: fixture.template },
  });
  const id = created.body.planRun.id;
  const waiting = await waitFor(
    async () => {
      const { body } = await svc.request('GET', `/plan-runs/${id}`);
      return body.children[0].state === 'pr_open' ? body : undefined;
    },
    'the child to wait for its merge',
    90_000,
  );
  const runId = waiting.children[0].runId as string;
  const connection = await Connection.connect({ address: svc.stack.temporalAddress });
  t.teardown(() => connection.close());
  const client = new Client({ connection });
  await waitFor(
    async () => (await client.workflow.getHandle(runId).describe()).status.name === 'COMPLETED',
    "the child's run workflow to close",
  );
  return { id, runId, client };
}

test('a plan-run cancelled while its child waits for the merge reaches the PR workflow', async (t) => {
  const { id, runId, client } = await waitingForMerge(t, fixture.seeds[0]!);

  const cancelled = await svc.request('POST', `/plan-runs/${id}/cancel`, { body: { reason: 'not tonight' } });
  t.is(cancelled.status, 200, JSON.stringify(cancelled.body));
  t.like(cancelled.body, {
    planRun: { state: 'cancelled' },
    cancelledChild: { childSeq: 1, runId },
    alreadyTerminal: false,
  });
  const after = (await svc.request('GET', `/plan-runs/${id}`)).body;
  t.like(after.children[0], { state: 'pr_open' }, 'an open PR stays what it is');
  const kinds = (await runEvents(svc, runId)).map((event) => event.kind);
  t.false(kinds.includes('plan_run.cancel_child_failed'), kinds.join(', '));
  // The stop is in the PR workflow's history; the PR is still followed.
  const following = client.workflow.getHandle(pullRequestWorkflowId(runId));
  const signals = (await following.fetchHistory()).events!.flatMap(
    (event) => event.workflowExecutionSignaledEventAttributes?.signalName ?? [],
  );
  t.deepEqual(signals, ['cancel']);
  t.is((await following.describe()).status.name, 'RUNNING');
  t.like((await svc.request('GET', `/runs/${runId}`)).body.run, { state: 'succeeded', prState: 'open' });
});

test('a child whose cancel fails is not a cancelled child: cancelledChild is {}', async (t) => {
  const { id, runId, client } = await waitingForMerge(t, fixture.seeds[1]!);
  // Neither the run's workflow (closed) nor its PR's (terminated here) can take the cancel.
  await client.workflow.getHandle(pullRequestWorkflowId(runId)).terminate('gone behind svc');
  const cancelled = await svc.request('POST', `/plan-runs/${id}/cancel`, { body: {} });
  t.is(cancelled.status, 200, JSON.stringify(cancelled.body));
  t.like(cancelled.body, { planRun: { state: 'cancelled' }, alreadyTerminal: false });
  t.deepEqual(cancelled.body.cancelledChild, {});
  const kinds = (await runEvents(svc, runId)).map((event) => event.kind);
  t.true(kinds.includes('plan_run.cancel_child_failed'), kinds.join(', '));
});
