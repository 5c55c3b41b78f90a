// Agent output in chunk rows (docs/decisions/0047-compact-output-storage.md), on both databases: its
// size against the output's, every line read back as the event it was, and a retried read that
// stores no line twice.
import test from 'ava';
import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSandboxEvents, type SupervisionProgress } from '../../activities/output-ingest.ts';
import { appendRunEvents, projectRunRow } from '../../activities/read-model/run-projection.ts';
import { commandRuntime } from '../../activities/runtimes/command.ts';
import { initialRuntimeState } from '../../activities/runtimes/types.ts';
import { RunEventEntity, type RunEvent } from '../../db/entities/index.ts';
import type { ReadModel } from '../../db/orm.ts';
import { RunEventsRepository } from '../../db/repositories/run-events.repository.ts';
import { sandboxFiles } from '../../sandbox/index.ts';
import { DATABASE_LEGS, postgresOrSkip } from '../support/env.ts';
import { snapshot, withReadModel } from '../support/read-model-fixture.ts';
import { runEventsBytes } from '../support/table-bytes.ts';

const seqOutput = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `${from + i}\n`).join('');

const progressAtStart = (): SupervisionProgress => ({
  offsets: { stdout: 0, stderr: 0 },
  runtime: initialRuntimeState(),
  stderrHead: [],
});

/** What the supervising activity does at each look: the new lines of the sandbox's files, appended. */
async function ingest(readModel: ReadModel, runId: string, dir: string, progress: SupervisionProgress) {
  for (;;) {
    const before = JSON.stringify(progress.offsets);
    const events = readSandboxEvents(sandboxFiles(dir), commandRuntime, progress, false);
    await appendRunEvents(readModel.em(), runId, events);
    if (JSON.stringify(progress.offsets) === before) return;
  }
}

async function allEvents(readModel: ReadModel, runId: string, page = 10_000): Promise<RunEvent[]> {
  const repository = new RunEventsRepository(readModel);
  const events: RunEvent[] = [];
  for (;;) {
    const batch = await repository.after(runId, events.at(-1)?.seq ?? 0, page);
    events.push(...batch);
    if (batch.length < page) return events;
  }
}

const texts = (events: RunEvent[]) => events.map((event) => (event.payload as { text: string }).text);

for (const leg of DATABASE_LEGS) {
  test(`${leg}: seq's output takes at most twice its bytes, and reads back line by line`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    await withReadModel(leg, async (readModel) => {
      const run = snapshot({ projectionVersion: 1 });
      await projectRunRow(readModel.em(), run);
      const dir = mkdtempSync(join(tmpdir(), 'svc-output-'));
      const lines = 200_000;
      const output = seqOutput(1, lines);
      writeFileSync(sandboxFiles(dir).stdout, output);
      const empty = await runEventsBytes(readModel);
      await ingest(readModel, run.id, dir, progressAtStart());
      const bytes = (await runEventsBytes(readModel)) - empty;
      const ratio = bytes / Buffer.byteLength(output);
      t.log(
        `${leg}: ${bytes} bytes of run_events for ${Buffer.byteLength(output)} bytes of output (${ratio.toFixed(2)}×)`,
      );
      t.true(ratio <= 2, `${ratio.toFixed(2)}× the output`);
      const events = await allEvents(readModel, run.id);
      t.is(events.length, lines);
      t.deepEqual(
        events.map((event) => event.seq),
        Array.from({ length: lines }, (_, i) => i + 1),
      );
      t.deepEqual(texts(events), output.trimEnd().split('\n'));
      t.true(events.every((event) => event.kind === 'log.stdout' && event.stream === 'stdout'));
      const rows = await readModel.em().count(RunEventEntity, { runId: run.id });
      t.true(rows <= lines / 400, `${rows} rows for ${lines} lines`);
    });
  });

  test(`${leg}: a read retried from an older offset stores no line twice and loses none`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    await withReadModel(leg, async (readModel) => {
      const run = snapshot({ projectionVersion: 1 });
      await projectRunRow(readModel.em(), run);
      const dir = mkdtempSync(join(tmpdir(), 'svc-output-'));
      const files = sandboxFiles(dir);
      writeFileSync(files.stdout, seqOutput(1, 1000));
      writeFileSync(files.stderr, 'warning one\n');
      const first = progressAtStart();
      await ingest(readModel, run.id, dir, first);
      // The attempt's heartbeat was older than what it wrote; the retry reads more than it did.
      appendFileSync(files.stdout, seqOutput(1001, 3000));
      appendFileSync(files.stderr, 'warning two\n');
      await ingest(readModel, run.id, dir, progressAtStart());
      // And once more from the middle of a stored chunk (line 500 of stdout).
      const middle = { ...progressAtStart(), offsets: { stdout: Buffer.byteLength(seqOutput(1, 499)), stderr: 0 } };
      await ingest(readModel, run.id, dir, middle);
      const events = await allEvents(readModel, run.id, 700);
      t.deepEqual(
        events.map((event) => event.seq),
        Array.from({ length: 3002 }, (_, i) => i + 1),
      );
      const out = events.filter((event) => event.stream === 'stdout');
      t.deepEqual(texts(out), seqOutput(1, 3000).trimEnd().split('\n'));
      t.deepEqual(texts(events.filter((event) => event.stream === 'stderr')), ['warning one', 'warning two']);
      const [counter] = await readModel.rows<{ last_event_seq: number }>(
        'select last_event_seq from runs where id = ?',
        [run.id],
      );
      t.is(Number(counter!.last_event_seq), 3002, 'no seq allocated to a line stored before');
    });
  });

  test(`${leg}: pages read across chunk rows, ordinary rows and per-line rows of before`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    await withReadModel(leg, async (readModel) => {
      const run = snapshot({ projectionVersion: 1 });
      await projectRunRow(readModel.em(), run);
      const line = (offset: number, text: string, ts: string) => ({
        dedupeKey: `stdout:${offset}`,
        kind: 'log.stdout' as const,
        stream: 'stdout' as const,
        ts,
        payload: { text },
      });
      const ts = '2026-12-07T10:00:00.000Z';
      // Rows of one line each, as svc wrote them before chunks (and as it writes other events).
      await appendRunEvents(readModel.em(), run.id, [line(0, 'old 1', ts)]);
      await appendRunEvents(readModel.em(), run.id, [line(6, 'old 2', '2026-12-07T10:00:00.001Z')]);
      const later = '2026-12-07T10:00:01.000Z';
      await appendRunEvents(readModel.em(), run.id, [
        ...Array.from({ length: 1200 }, (_, i) => line(12 + i * 10, `new ${i}`, later)),
        { dedupeKey: 'state:x', kind: 'state_change', stream: 'system', ts: later, payload: { state: 'x' } },
        line(20_000, 'after', later),
        line(20_010, 'after 2', later),
      ]);
      const rows = await readModel.em().find(RunEventEntity, { runId: run.id }, { orderBy: { seq: 'asc' } });
      t.deepEqual(
        rows.map((row) => [row.seq, row.lastSeq]),
        [
          [1, null],
          [2, null],
          [3, 502],
          [503, 1002],
          [1003, 1202],
          [1203, null],
          [1204, 1205],
        ],
      );
      const events = await allEvents(readModel, run.id, 1000);
      t.is(events.length, 1205);
      t.deepEqual(
        events.map((event) => event.seq),
        Array.from({ length: 1205 }, (_, i) => i + 1),
      );
      t.deepEqual(texts(events.slice(0, 3)), ['old 1', 'old 2', 'new 0']);
      t.is(events[1202]!.kind, 'state_change');
      t.is(events[600]!.ts.toISOString(), later);

      const repository = new RunEventsRepository(readModel);
      const page = await repository.after(run.id, 500, 5);
      t.deepEqual(
        page.map((event) => event.seq),
        [501, 502, 503, 504, 505],
        'a page starts in the middle of a chunk and runs on into the next',
      );
      t.deepEqual(texts(page), ['new 498', 'new 499', 'new 500', 'new 501', 'new 502']);
      t.deepEqual(
        (await repository.after(run.id, 1000, 10, 1005)).map((event) => event.seq),
        [1001, 1002, 1003, 1004],
      );
      t.is(await repository.pageStartBefore(run.id, Number.MAX_SAFE_INTEGER, 4), 1201);
      t.is(await repository.pageStartBefore(run.id, 600, 100), 499);
      t.is(await repository.pageStartBefore(run.id, 600, 599), 0);
      t.is(await repository.pageStartBefore(run.id, 600, 600), null);
      const each = await repository.afterEach([{ runId: run.id, afterSeq: 1000 }], 50);
      t.deepEqual(
        each.map((event) => event.seq),
        Array.from({ length: 50 }, (_, i) => 1001 + i),
      );
    });
  });
}
