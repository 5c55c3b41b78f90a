// Kill -9 the worker while an agent runs; a new worker must finish the run exactly once, with the
// agent started once, every output line recorded once, and the read model agreeing with Temporal.
import test from 'ava';
import { Client, Connection } from '@temporalio/client';
import { assertRanExactlyOnce } from '../support/ticking-run.ts';
import { killWorkerMidRun } from '../support/worker-kill.ts';

test('a run survives SIGKILL of its worker and completes exactly once', async (t) => {
  const { stack, api, runId, marker, finished } = await killWorkerMidRun(t, {}, async (runId, running) => {
    t.is((await running.request('GET', `/runs/${runId}`)).body.run.state, 'running');
  });
  t.is(finished.state, 'succeeded');
  await assertRanExactlyOnce(t, stack.readModel, runId, marker);
  const connection = await Connection.connect({ address: stack.temporalAddress });
  t.teardown(() => connection.close());
  const handle = new Client({ connection }).workflow.getHandle(runId);
  t.deepEqual(await handle.result(), {
    runId,
    state: 'succeeded',
    failureReason: null,
    prUrl: null,
    prState: null,
    costUsd: null,
  });
  t.is((await handle.describe()).status.name, 'COMPLETED');
  t.is((await api.request('GET', '/runs')).body.total, 1, 'no duplicate run');
});
