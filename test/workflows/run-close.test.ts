// A run's workflow closes with the run: failed → Failed (the reason in its message, the outcome in
// its details), cancelled → Canceled, whether svc cancelled it or Temporal was asked to.
import test from 'ava';
import { Client, Connection, WorkflowFailedError, ApplicationFailure, CancelledFailure } from '@temporalio/client';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RUN_FAILED } from '../../core/run-workflows.ts';
import { isProcessAlive } from '../../platform/processes.ts';
import { waitFor } from '../support/processes.ts';
import { runEvents, startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

let svc: TestStack;
let connection: Connection;
let client: Client;
test.before(async () => {
  svc = await startTestStack();
  connection = await Connection.connect({ address: svc.stack.temporalAddress });
  client = new Client({ connection });
});
test.after.always(async () => {
  await connection?.close();
  await svc?.stop();
});

const dispatch = async (prompt: string) =>
  (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt } })).body.run.id as string;

/** Waits for the agent to print `started`; answers its host pid, as its sandbox's supervisor recorded it. */
async function started(runId: string): Promise<number> {
  await waitFor(
    async () => (await runEvents(svc, runId)).some((event) => event.payload?.text === 'started'),
    'the agent to start',
  );
  const agent = join(svc.config.dataDir, 'sandboxes', runId, 'agent.json');
  return (JSON.parse(readFileSync(agent, 'utf8')) as { pid: number }).pid;
}

async function failure(runId: string): Promise<WorkflowFailedError> {
  const error = await client.workflow
    .getHandle(runId)
    .result()
    .then(
      () => undefined,
      (reason: unknown) => reason,
    );
  if (!(error instanceof WorkflowFailedError)) throw new Error(`the workflow did not fail: ${String(error)}`);
  return error;
}

test.serial('a failed run closes its workflow Failed, with the reason and the outcome', async (t) => {
  const runId = await dispatch('echo about to fail\nexit 2');
  const run = await waitForRunState(svc, runId);
  t.like(run, { state: 'failed', failureReason: 'crashed' });
  const error = await failure(runId);
  t.true(error.cause instanceof ApplicationFailure);
  const cause = error.cause as ApplicationFailure;
  t.is(cause.type, RUN_FAILED);
  t.true(cause.nonRetryable);
  t.regex(cause.message, /crashed/);
  t.like(cause.details?.[0], { runId, state: 'failed', failureReason: 'crashed' });
  t.is((await client.workflow.getHandle(runId).describe()).status.name, 'FAILED');
});

test.serial(
  "a cancel asked in Temporal is svc's cancel: the agent is stopped, the run and workflow cancelled",
  async (t) => {
    const runId = await dispatch('echo started\nsleep 60');
    const agentPid = await started(runId);
    t.true(isProcessAlive(agentPid));
    await client.workflow.getHandle(runId).cancel();
    const run = await waitForRunState(svc, runId);
    t.like(run, { state: 'cancelled', failureReason: null });
    const events = await runEvents(svc, runId);
    t.like(
      events.find((event) => event.kind === 'cancel.requested'),
      { payload: { requestedBy: 'temporal' } },
    );
    t.like(events.at(-1), { kind: 'state_change', payload: { type: 'result', state: 'cancelled' } });
    t.false(isProcessAlive(agentPid), 'the agent was stopped, as by POST /runs/{id}/cancel');
    const error = await failure(runId);
    t.true(error.cause instanceof CancelledFailure);
    t.is((await client.workflow.getHandle(runId).describe()).status.name, 'CANCELLED');
  },
);

test.serial("svc's own cancel closes the workflow Canceled too", async (t) => {
  const runId = await dispatch('echo started\nsleep 60');
  await started(runId);
  const cancelled = await svc.request('POST', `/runs/${runId}/cancel`, { body: { reason: 'not now' } });
  t.like(cancelled.body, { state: 'cancelled', alreadyTerminal: false });
  const events = await runEvents(svc, runId);
  t.like(
    events.find((event) => event.kind === 'cancel.requested'),
    { payload: { reason: 'not now', requestedBy: 'operator' } },
  );
  await waitFor(
    async () => (await client.workflow.getHandle(runId).describe()).status.name === 'CANCELLED',
    'the workflow to close Canceled',
  );
  t.pass();
});
