// Kill -9 the worker while an agent runs; a new worker must finish the run exactly once, with the
// agent started once, every output line recorded once, and the read model agreeing with Temporal.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { RunEventEntity } from '../../db/entities/index.ts';
import { loadConfig } from '../../stack/config.ts';
import { startStack } from '../../stack/stack.ts';
import { spawnSvc, waitFor, waitForOutput } from '../support/processes.ts';
import { request, testEnvironment, waitForRunState } from '../support/stack.ts';

test('a run survives SIGKILL of its worker and completes exactly once', async (t) => {
  const environment = await testEnvironment({});
  const stack = await startStack({ config: loadConfig(environment.env), api: true, worker: false, noAuth: false, log: () => {} });
  t.teardown(() => stack.stop());
  const api = { request: (method: string, path: string, options?: any) => request(stack.api!.url, stack.token.token, method, path, options) };

  const firstWorker = spawnSvc(['worker'], environment.env);
  t.teardown(() => firstWorker.child.kill('SIGKILL'));
  await waitForOutput(firstWorker, /worker: polling/);

  const marker = join(environment.dataDir, 'agent-starts.log');
  const prompt = `echo started >> ${marker}\nfor i in $(seq 1 8); do echo tick $i; sleep 1; done`;
  const { body } = await api.request('POST', '/runs', { body: { agent: 'shell', prompt } });
  const runId = body.run.id as string;

  const em = () => stack.readModel.em();
  await waitFor(async () => (await em().count(RunEventEntity, { runId, kind: 'log.stdout' })) >= 2, 'the agent to print');
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
  t.is(readFileSync(marker, 'utf8'), 'started\n', 'the agent process was started exactly once');
  const log = await em().find(RunEventEntity, { runId }, { orderBy: { seq: 'asc' } });
  t.deepEqual(
    log.filter((e) => e.stream === 'stdout').map((e) => (e.payload as { text: string }).text),
    Array.from({ length: 8 }, (_, i) => `tick ${i + 1}`),
    'every output line recorded once, in order',
  );
  t.deepEqual(log.filter((e) => e.kind === 'state_change').map((e) => (e.payload as { state: string }).state), ['queued', 'running', 'succeeded']);
  t.deepEqual(log.map((e) => e.seq), log.map((_, i) => i + 1));

  const connection = await Connection.connect({ address: stack.temporalAddress });
  t.teardown(() => connection.close());
  const handle = new Client({ connection }).workflow.getHandle(runId);
  t.deepEqual(await handle.result(), { runId, state: 'succeeded', failureReason: null });
  const description = await handle.describe();
  t.is(description.status.name, 'COMPLETED');
  t.is((await api.request('GET', '/runs')).body.total, 1, 'no duplicate run');
});
