// Benchmarks, each a ratio against a baseline measured in the same run on the same machine, so
// the numbers mean something on any hardware. A ratio over its target fails the bench.
//   npm run bench
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { appendRunEvents, projectRunRow, type RunEventInput } from '../../activities/read-model/run-projection.ts';
import { BUILTIN_AGENTS } from '../../core/agents.ts';
import { newId } from '../../core/ids.ts';
import { initialRunSnapshot } from '../../core/run-model.ts';
import { RunEventEntity } from '../../db/entities/index.ts';
import { initORM, migrate } from '../../db/orm.ts';
import { startIsolatedStack, waitForRunState } from '../support/stack.ts';

interface Result {
  name: string;
  measuredMs: number;
  baselineMs: number;
  ratio: number;
  target: number;
  note: string;
}

async function time(work: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

function runSnapshot() {
  const runId = newId('run');
  return initialRunSnapshot({ runId, createdAt: Date.now(), agent: BUILTIN_AGENTS[0]!, projectId: null, prompt: 'bench', trigger: 'bench', seedId: null, ref: null, baseCommit: null, targetBranch: null, dispatcherHandle: null, sandbox: { id: `sbx-${runId}`, workspacePath: '/tmp' } });
}

/** Event ingestion: svc's idempotent, seq-allocating append vs a plain batched insert. */
async function eventIngest(): Promise<Result> {
  const readModel = await initORM({ databaseUrl: join(mkdtempSync(join(tmpdir(), 'svc-bench-')), 'bench.sqlite') });
  await migrate(readModel);
  const batches = 60;
  const perBatch = 50;
  const event = (i: number): RunEventInput => ({ dedupeKey: `stdout:${i}`, kind: 'log.stdout', stream: 'stdout', ts: new Date().toISOString(), payload: { text: `line ${i}` } });
  const measuredRun = runSnapshot();
  const baselineRun = runSnapshot();
  await projectRunRow(readModel.em(), measuredRun);
  await projectRunRow(readModel.em(), baselineRun);
  const baselineMs = await time(async () => {
    for (let b = 0; b < batches; b++) {
      const rows = Array.from({ length: perBatch }, (_, i) => ({ ...event(b * perBatch + i), runId: baselineRun.id, seq: b * perBatch + i + 1, ts: new Date(), payload: { text: 'x' } }));
      await readModel.em().insertMany(RunEventEntity, rows);
    }
  });
  const measuredMs = await time(async () => {
    for (let b = 0; b < batches; b++) await appendRunEvents(readModel.em(), measuredRun.id, Array.from({ length: perBatch }, (_, i) => event(b * perBatch + i)));
  });
  await readModel.close();
  return { name: 'event-ingest', measuredMs, baselineMs, ratio: measuredMs / baselineMs, target: 6, note: `${batches * perBatch} events in batches of ${perBatch}: appendRunEvents vs plain insertMany (SQLite)` };
}

/** Dispatch: POST /runs until the queued run is readable vs a bare Temporal workflow start. */
async function dispatch(): Promise<Result> {
  const { temporal, environment, stack, api, stop } = await startIsolatedStack();
  const connection = await Connection.connect({ address: temporal.address });
  try {
    const client = new Client({ connection });
    const count = 20;
    const ids: string[] = [];
    // Warm-up: the first workflow task loads the bundle.
    await waitForRunState(api, (await api.request('POST', '/runs', { body: { agent: 'shell', prompt: 'true' } })).body.run.id);
    const baselineMs = await time(async () => {
      for (let i = 0; i < count; i++) {
        const run = runSnapshot();
        await client.workflow.start('runWorkflow', { workflowId: run.id, taskQueue: stack.config.taskQueue, args: [{ runId: run.id, createdAt: run.createdAt, agent: BUILTIN_AGENTS[0], projectId: null, prompt: 'true', trigger: 'bench', seedId: null, ref: null, baseCommit: null, targetBranch: null, dispatcherHandle: null, sandbox: { id: run.sandboxId, workspacePath: join(environment.dataDir, 'workspaces', run.id) } }] });
        ids.push(run.id);
      }
    });
    // Let the baseline's runs finish so they do not load the machine while the measured phase runs.
    for (const id of ids.splice(0)) await waitForRunState(api, id);
    const measuredMs = await time(async () => {
      for (let i = 0; i < count; i++) ids.push((await api.request('POST', '/runs', { body: { agent: 'shell', prompt: 'true' } })).body.run.id);
    });
    for (const id of ids) await waitForRunState(api, id);
    return { name: 'dispatch', measuredMs, baselineMs, ratio: measuredMs / baselineMs, target: 6, note: `${count} sequential dispatches: POST /runs (validated, started, projected, readable) vs client.workflow.start` };
  } finally {
    await connection.close();
    await stop();
  }
}

const results = [await eventIngest(), await dispatch()];
let failed = 0;
for (const result of results) {
  const ok = result.ratio <= result.target;
  if (!ok) failed += 1;
  console.log(JSON.stringify({ ...result, measuredMs: Math.round(result.measuredMs), baselineMs: Math.round(result.baselineMs), ratio: Number(result.ratio.toFixed(2)), ok }));
}
console.log(`${results.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
