// Cancelling a plan-run mid-child, and resuming the cancelled plan-run, against the real stack.
import test from 'ava';
import { setSwitch, startPlanStack, waitForPlanRunState, type PlanFixture } from '../support/plan-fixture.ts';
import type { TestStack } from '../support/stack.ts';
import { waitFor } from '../support/processes.ts';
import { Client, Connection } from '@temporalio/client';

let fixture: PlanFixture;
let svc: TestStack;
let project: string;
let stop: () => Promise<void> = async () => {};

test.before(async () => {
  ({ fixture, svc, project, stop } = await startPlanStack('acme', 'cancelled'));
});
test.after.always(() => stop());

const waitForPlanState = (id: string, states?: string[]) => waitForPlanRunState(svc, id, states);

test.serial(
  'cancel stops the in-flight child and the plan-run; it is idempotent; a cancelled plan-run can be resumed',
  async (t) => {
    const seed = fixture.github.createSeed('acme', 'cancelled', 'Slow work');
    fixture.github.pushAll('acme', 'cancelled', 'a slow seed');
    setSwitch(fixture, 'slow', seed);
    const created = await svc.request('POST', '/plan-runs', {
      body: { project, agent: 'shell', issues: [seed], promptTemplate: fixture.template },
    });
    const id = created.body.planRun.id;
    const running = await waitFor(
      async () => {
        const { body } = await svc.request('GET', `/plan-runs/${id}`);
        return body.children[0].state === 'running' ? body : undefined;
      },
      'the child to run',
      60_000,
    );
    const cancelled = await svc.request('POST', `/plan-runs/${id}/cancel`, { body: { reason: 'not tonight' } });
    t.is(cancelled.status, 200, JSON.stringify(cancelled.body));
    t.like(cancelled.body, {
      planRun: { state: 'cancelled' },
      cancelledChild: { childSeq: 1, runId: running.children[0].runId },
      alreadyTerminal: false,
    });
    const run = await waitFor(
      async () => {
        const { body } = await svc.request('GET', `/runs/${running.children[0].runId}`);
        return body.run.state === 'cancelled' ? body.run : undefined;
      },
      'the child run to be cancelled',
      30_000,
    );
    t.is(run.state, 'cancelled');
    const again = await svc.request('POST', `/plan-runs/${id}/cancel`, { body: {} });
    t.like(again.body, { planRun: { state: 'cancelled' }, alreadyTerminal: true });
    t.deepEqual(again.body.cancelledChild, {}, 'nothing cancelled is an empty object, not null');

    setSwitch(fixture, 'slow', seed, false);
    const resumed = await svc.request('POST', `/plan-runs/${id}/resume`, { body: {} });
    t.is(resumed.status, 200, JSON.stringify(resumed.body));
    t.is(resumed.body.reason, 'cancelled', 'a cancelled plan-run resumes from its state');
    const done = await waitForPlanState(id);
    t.is(done.planRun.state, 'succeeded', JSON.stringify(done));
    t.not(done.children[0].runId, running.children[0].runId);
  },
);

test.serial('a cancel that finds the workflow closed under a running row answers cancelledChild {}', async (t) => {
  const seed = fixture.github.createSeed('acme', 'cancelled', 'Work whose plan is terminated');
  fixture.github.pushAll('acme', 'cancelled', 'another slow seed');
  setSwitch(fixture, 'slow', seed);
  t.teardown(() => setSwitch(fixture, 'slow', seed, false));
  const created = await svc.request('POST', '/plan-runs', {
    body: { project, agent: 'shell', issues: [seed], promptTemplate: fixture.template },
  });
  const id = created.body.planRun.id;
  await waitFor(
    async () =>
      (await svc.request('GET', `/plan-runs/${id}`)).body.children[0].state === 'running' ? true : undefined,
    'the child to run',
    60_000,
  );
  const connection = await Connection.connect({ address: svc.stack.temporalAddress });
  t.teardown(() => connection.close());
  await new Client({ connection }).workflow.getHandle(id).terminate('closed behind svc');
  const cancelled = await svc.request('POST', `/plan-runs/${id}/cancel`, { body: {} });
  t.is(cancelled.status, 200, JSON.stringify(cancelled.body));
  t.is(cancelled.body.alreadyTerminal, true);
  t.deepEqual(cancelled.body.cancelledChild, {});
});
