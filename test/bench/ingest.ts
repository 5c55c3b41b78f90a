// Event ingestion: svc's idempotent, seq-allocating append vs a plain batched insert of the same
// events into the same SQLite read model.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { appendRunEvents, projectRunRow, type RunEventInput } from '../../activities/read-model/run-projection.ts';
import { BUILTIN_AGENTS } from '../../core/agents.ts';
import { newId } from '../../core/ids.ts';
import { buildRunInput } from '../../core/run-input.ts';
import { initialRunSnapshot } from '../../core/run-model.ts';
import { RunEventEntity } from '../../db/entities/index.ts';
import { initORM, migrate } from '../../db/orm.ts';

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

/** Event ingestion: svc's idempotent, seq-allocating append vs a plain batched insert. */
export async function measureEventIngest() {
  const readModel = await initORM({ databaseUrl: join(mkdtempSync(join(tmpdir(), 'svc-bench-')), 'bench.sqlite') });
  await migrate(readModel);
  const batches = 60;
  const perBatch = 50;
  const event = (i: number): RunEventInput => ({
    dedupeKey: `stdout:${i}`,
    kind: 'log.stdout',
    stream: 'stdout',
    ts: new Date().toISOString(),
    payload: { text: `line ${i}` },
  });
  const snapshot = () => {
    const runId = newId('run');
    return initialRunSnapshot(
      buildRunInput(
        { runId, createdAt: Date.now(), agent: BUILTIN_AGENTS[0]!, projectId: null, prompt: 'bench', trigger: 'bench' },
        '/tmp',
      ),
    );
  };
  const measuredRun = snapshot();
  const baselineRun = snapshot();
  await projectRunRow(readModel.em(), measuredRun);
  await projectRunRow(readModel.em(), baselineRun);
  const baselineMs = await timed(async () => {
    for (let b = 0; b < batches; b++) {
      await readModel.em().insertMany(
        RunEventEntity,
        Array.from({ length: perBatch }, (_, i) => ({
          ...event(b * perBatch + i),
          runId: baselineRun.id,
          seq: b * perBatch + i + 1,
          ts: new Date(),
          payload: { text: 'x' },
        })),
      );
    }
  });
  const measuredMs = await timed(async () => {
    for (let b = 0; b < batches; b++)
      await appendRunEvents(
        readModel.em(),
        measuredRun.id,
        Array.from({ length: perBatch }, (_, i) => event(b * perBatch + i)),
      );
  });
  await readModel.close();
  return {
    ratio: measuredMs / baselineMs,
    events: batches * perBatch,
    measuredMs: Math.round(measuredMs),
    baselineMs: Math.round(baselineMs),
  };
}
