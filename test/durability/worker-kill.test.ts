// Kill -9 the worker while an agent runs; a new worker must finish the run exactly once, with the
// agent started once, every output line recorded once, and the read model agreeing with Temporal.
import test from 'ava';
import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../../platform/config.ts';
import { startStack } from '../../stack/stack.ts';
import { spawnSvc, waitForOutput } from '../support/processes.ts';
import { request, testEnvironment, waitForRunState } from '../support/stack.ts';
import { assertRanExactlyOnce, startTickingRun } from '../support/ticking-run.ts';

test('a run survives SIGKILL of its worker and completes exactly once', async (t) => {
  const environment = await testEnvironment({});
  const stack = await startStack({
    config: loadConfig(environment.env),
    api: true,
    worker: false,
    noAuth: false,
    log: () => {},
  });
  t.teardown(() => stack.stop());
  const api = {
    request: (method: string, path: string, options?: any) =>
      request(stack.api!.url, stack.token.token, method, path, options),
  };

  const firstWorker = spawnSvc(['worker'], environment.env);
  t.teardown(() => firstWorker.child.kill('SIGKILL'));
  await waitForOutput(firstWorker, /worker: polling/);

  const { runId, marker } = await startTickingRun(api, stack.readModel);
  firstWorker.child.kill('SIGKILL');
  await firstWorker.exited;
  t.is((await api.request('GET', `/runs/${runId}`)).body.run.state, 'running');

  const secondWorker = spawnSvc(['worker'], environment.env);
  t.teardown(async () => {
    secondWorker.child.kill('SIGTERM');
    await secondWorker.exited;
  });
  const finished = await waitForRunState(api, runId, undefined, 90_000);

  t.is(finished.state, 'succeeded');
  await assertRanExactlyOnce(t, stack.readModel, runId, marker);
  const connection = await Connection.connect({ address: stack.temporalAddress });
  t.teardown(() => connection.close());
  const handle = new Client({ connection }).workflow.getHandle(runId);
  t.deepEqual(await handle.result(), { runId, state: 'succeeded', failureReason: null, prUrl: null, prState: null });
  t.is((await handle.describe()).status.name, 'COMPLETED');
  t.is((await api.request('GET', '/runs')).body.total, 1, 'no duplicate run');
});
