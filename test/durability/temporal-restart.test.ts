// Restart the Temporal dev server (same db file) while an agent runs: the run must still reach its
// correct terminal state exactly once, and readiness must say "not ready" while Temporal is down.
import test from 'ava';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { RunEventEntity } from '../../db/entities/index.ts';
import { loadConfig } from '../../stack/config.ts';
import { startStack } from '../../stack/stack.ts';
import { loadTemporalDevSettings, startTemporalDev } from '../../stack/temporal-dev.ts';
import { freePort } from '../support/free-port.ts';
import { waitFor } from '../support/processes.ts';
import { request, testEnvironment, waitForRunState } from '../support/stack.ts';

test('a run survives a restart of the Temporal server', async (t) => {
  const temporalDir = mkdtempSync(join(tmpdir(), 'svc-temporal-'));
  const settings = loadTemporalDevSettings();
  settings.port = await freePort();
  settings.ui.enabled = false;
  let temporal = await startTemporalDev(temporalDir, settings);
  t.teardown(() => temporal.stop());

  const environment = await testEnvironment({ temporalAddress: temporal.address });
  const stack = await startStack({ config: loadConfig(environment.env), api: true, worker: true, noAuth: false, log: () => {} });
  t.teardown(() => stack.stop());
  const api = { request: (method: string, path: string, options?: any) => request(stack.api!.url, stack.token.token, method, path, options) };

  const marker = join(environment.dataDir, 'agent-starts.log');
  const prompt = `echo started >> ${marker}\nfor i in $(seq 1 8); do echo tick $i; sleep 1; done`;
  const { body } = await api.request('POST', '/runs', { body: { agent: 'shell', prompt } });
  const runId = body.run.id as string;
  const em = () => stack.readModel.em();
  await waitFor(async () => (await em().count(RunEventEntity, { runId, kind: 'log.stdout' })) >= 2, 'the agent to print');

  // Hard stop: SIGKILL the whole server, as a crash would.
  process.kill(-temporal.pid!, 'SIGKILL');
  await waitFor(async () => (await api.request('GET', '/readyz')).status === 503 || undefined, 'readyz to report Temporal down', 15_000);
  const notReady = await api.request('GET', '/readyz');
  t.deepEqual(notReady.body.checks.find((check: { name: string }) => check.name === 'temporal_reachable')?.ok, false);

  temporal = await startTemporalDev(temporalDir, settings);
  const finished = await waitForRunState(api, runId, undefined, 120_000);
  t.is(finished.state, 'succeeded');
  t.is(readFileSync(marker, 'utf8'), 'started\n', 'the agent process was started exactly once');
  const log = await em().find(RunEventEntity, { runId }, { orderBy: { seq: 'asc' } });
  t.deepEqual(log.filter((e) => e.stream === 'stdout').map((e) => (e.payload as { text: string }).text), Array.from({ length: 8 }, (_, i) => `tick ${i + 1}`));
  t.deepEqual(log.filter((e) => e.kind === 'state_change').map((e) => (e.payload as { state: string }).state), ['queued', 'running', 'succeeded']);
  t.is((await api.request('GET', '/readyz')).status, 200);

  const connection = await Connection.connect({ address: temporal.address });
  t.teardown(() => connection.close());
  t.deepEqual(await new Client({ connection }).workflow.getHandle(runId).result(), { runId, state: 'succeeded', failureReason: null });
});
