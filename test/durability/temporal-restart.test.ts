// Restart the Temporal dev server (same db file) while an agent runs: the run must still reach its
// correct terminal state exactly once, and readiness must say "not ready" while Temporal is down.
import test from 'ava';
import { Client, Connection } from '@temporalio/client';
import { startTemporalDev } from '../../stack/temporal-dev.ts';
import { waitFor } from '../support/processes.ts';
import { startIsolatedStack, waitForRunState } from '../support/stack.ts';
import { assertRanExactlyOnce, startTickingRun } from '../support/ticking-run.ts';

test('a run survives a restart of the Temporal server', async (t) => {
  const isolated = await startIsolatedStack();
  let temporal = isolated.temporal;
  t.teardown(async () => {
    await isolated.stack.stop();
    await temporal.stop();
  });
  const { api, stack } = isolated;

  const { runId, marker } = await startTickingRun(api, stack.readModel);
  // Hard stop: SIGKILL the whole server, as a crash would.
  process.kill(-temporal.pid!, 'SIGKILL');
  await waitFor(
    async () => (await api.request('GET', '/readyz')).status === 503 || undefined,
    'readyz to report Temporal down',
    15_000,
  );
  const notReady = await api.request('GET', '/readyz');
  t.is(notReady.body.error.code, 'runtime_unreachable');

  temporal = await startTemporalDev(isolated.temporalDir, isolated.temporalSettings);
  const finished = await waitForRunState(api, runId, undefined, 120_000);
  t.is(finished.state, 'succeeded');
  await assertRanExactlyOnce(t, stack.readModel, runId, marker);
  t.is((await api.request('GET', '/readyz')).status, 200);

  const connection = await Connection.connect({ address: temporal.address });
  t.teardown(() => connection.close());
  t.deepEqual(await new Client({ connection }).workflow.getHandle(runId).result(), {
    runId,
    state: 'succeeded',
    failureReason: null,
    prUrl: null,
    prState: null,
    costUsd: null,
  });
});
