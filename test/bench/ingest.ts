// Event ingestion: svc's idempotent, seq-allocating append vs a plain batched insert of the same
// events into the same SQLite read model; and an agent's million lines of output, in time and bytes.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSandboxEvents, type SupervisionProgress } from '../../activities/output-ingest.ts';
import { appendRunEvents, projectRunRow, type RunEventInput } from '../../activities/read-model/run-projection.ts';
import { commandRuntime } from '../../activities/runtimes/command.ts';
import { initialRuntimeState } from '../../activities/runtimes/types.ts';
import { BUILTIN_AGENTS } from '../../core/agents.ts';
import { newId } from '../../core/ids.ts';
import { buildRunInput } from '../../core/run-input.ts';
import { initialRunSnapshot } from '../../core/run-model.ts';
import { RunEventEntity } from '../../db/entities/index.ts';
import { initORM, migrate } from '../../db/orm.ts';
import { sandboxFiles } from '../../sandbox/index.ts';
import { runEventsBytes } from '../support/table-bytes.ts';

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

/**
 * An agent's output of `seq 1 1000000` (6.9 MB) ingested as the supervising activity does (reads of
 * a MiB, each appended), against a bare batched insert of one row per line (how svc stored output
 * before chunk rows): the time of each, and the read model's bytes (table and indexes) per byte of
 * output.
 */
export async function measureOutputIngest(lines = 1_000_000) {
  const readModel = await initORM({ databaseUrl: join(mkdtempSync(join(tmpdir(), 'svc-bench-')), 'bench.sqlite') });
  await migrate(readModel);
  try {
    const dir = mkdtempSync(join(tmpdir(), 'svc-bench-output-'));
    const output = Array.from({ length: lines }, (_, i) => `${i + 1}\n`).join('');
    writeFileSync(sandboxFiles(dir).stdout, output);
    const outputBytes = Buffer.byteLength(output);
    const [measuredRun, baselineRun] = [benchRun(), benchRun()];
    await projectRunRow(readModel.em(), measuredRun);
    await projectRunRow(readModel.em(), baselineRun);
    const empty = await runEventsBytes(readModel);
    const progress: SupervisionProgress = {
      offsets: { stdout: 0, stderr: 0 },
      runtime: initialRuntimeState(),
      stderrHead: [],
    };
    const measuredMs = await timed(async () => {
      for (;;) {
        const before = progress.offsets.stdout;
        const events = readSandboxEvents(sandboxFiles(dir), commandRuntime, progress, true);
        await appendRunEvents(readModel.em(), measuredRun.id, events);
        if (progress.offsets.stdout === before) return;
      }
    });
    const measuredBytes = (await runEventsBytes(readModel)) - empty;
    const texts = output.trimEnd().split('\n');
    const baselineMs = await timed(async () => {
      const ts = new Date();
      for (let start = 0; start < texts.length; start += 500)
        await readModel.em().insertMany(
          RunEventEntity,
          texts.slice(start, start + 500).map((text, i) => ({
            runId: baselineRun.id,
            seq: start + i + 1,
            ts,
            kind: 'log.stdout',
            stream: 'stdout' as const,
            payload: { text },
            dedupeKey: `stdout:${start + i}`,
          })),
        );
    });
    const baselineBytes = (await runEventsBytes(readModel)) - empty - measuredBytes;
    return {
      bytesPerOutputByte: measuredBytes / outputBytes,
      timeRatio: measuredMs / baselineMs,
      lines,
      outputBytes,
      measuredBytes,
      baselineBytes,
      measuredMs: Math.round(measuredMs),
      baselineMs: Math.round(baselineMs),
    };
  } finally {
    await readModel.close();
  }
}

function benchRun() {
  const runId = newId('run');
  return initialRunSnapshot(
    buildRunInput(
      { runId, createdAt: Date.now(), agent: BUILTIN_AGENTS[0]!, projectId: null, prompt: 'bench', trigger: 'bench' },
      '/tmp',
    ),
  );
}
