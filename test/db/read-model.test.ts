// The read model on both databases: migrations from empty, no drift between entities and
// migrations, and the idempotent projection/event writes the activities rely on.
import test from 'ava';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { appendRunEvents, projectRunRow } from '../../activities/read-model/run-projection.ts';
import { sweepLeftovers } from '../../sandbox/host/sandbox-sweep.ts';
import { BUILTIN_AGENTS } from '../../core/agents.ts';
import { RunEntity, RunEventEntity } from '../../db/entities/index.ts';
import { initORM, migrate } from '../../db/orm.ts';
import { createScratchPostgresDatabase } from '../../db/scratch-postgres.ts';
import { DATABASE_LEGS, postgresOrSkip, suitePostgresUrl } from '../support/env.ts';
import { snapshot, withReadModel } from '../support/read-model-fixture.ts';

for (const leg of DATABASE_LEGS) {
  test(`${leg}: migrations apply from empty, are idempotent and match the entities`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    await withReadModel(leg, async (readModel) => {
      t.deepEqual(await migrate(readModel), [], 'a second migrate applies nothing');
      const drift = await readModel.orm.schema.getUpdateSchemaSQL({ wrap: false });
      t.is(drift.trim(), '', 'entities and migrations describe the same schema');
    });
  });

  test(`${leg}: a projected run keeps the spec's types (createdAt a number, timestamps round-trip)`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    await withReadModel(leg, async (readModel) => {
      const run = snapshot({ state: 'running', startedAt: '2026-11-22T01:02:03.456Z', projectionVersion: 2 });
      await projectRunRow(readModel.em(), run);
      const row = await readModel.em().findOneOrFail(RunEntity, { id: run.id });
      t.is(typeof row.createdAt, 'number');
      t.is(row.createdAt, 1_795_000_000_123);
      t.is(row.startedAt?.toISOString(), '2026-11-22T01:02:03.456Z');
      t.is(row.state, 'running');
      t.deepEqual(row.renderedAgentJson, BUILTIN_AGENTS[0] as unknown as Record<string, unknown>);
    });
  });

  test(`${leg}: an older projection never overwrites a newer one`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    await withReadModel(leg, async (readModel) => {
      const run = snapshot({ state: 'succeeded', projectionVersion: 5 });
      await projectRunRow(readModel.em(), run);
      await projectRunRow(readModel.em(), { ...run, state: 'running', projectionVersion: 3 });
      t.is((await readModel.em().findOneOrFail(RunEntity, { id: run.id })).state, 'succeeded');
      await projectRunRow(readModel.em(), { ...run, state: 'failed', failureReason: 'crashed', projectionVersion: 6 });
      t.is((await readModel.em().findOneOrFail(RunEntity, { id: run.id })).failureReason, 'crashed');
    });
  });

  test(`${leg}: an event is stored once per dedupe key, seqs gap-free per run, under concurrent writers`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    await withReadModel(leg, async (readModel) => {
      const run = snapshot({ projectionVersion: 1 });
      await projectRunRow(readModel.em(), run);
      const event = (key: string) => ({
        dedupeKey: key,
        kind: 'log.stdout' as const,
        stream: 'stdout' as const,
        ts: new Date().toISOString(),
        payload: { text: key },
      });
      t.is(await appendRunEvents(readModel.em(), run.id, [event('a'), event('b'), event('a')]), 2);
      t.is(
        await appendRunEvents(readModel.em(), run.id, [event('b'), event('c')]),
        1,
        'a retried batch writes only what is new',
      );
      const writers = Array.from({ length: 8 }, (_, writer) =>
        appendRunEvents(
          readModel.em(),
          run.id,
          Array.from({ length: 5 }, (_, i) => event(`w${writer}-${i}`)),
        ),
      );
      await Promise.all(writers);
      const rows = await readModel.em().find(RunEventEntity, { runId: run.id }, { orderBy: { seq: 'asc' } });
      t.is(rows.length, 43);
      t.deepEqual(
        rows.map((row) => row.seq),
        Array.from({ length: 43 }, (_, i) => i + 1),
      );
      t.is(new Set(rows.map((row) => row.dedupeKey)).size, 43);
      t.deepEqual(rows[0]!.payload, { text: 'a' });
    });
  });

  test(`${leg}: a poll's worth of output is written in batches, repeats across them dropped`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    await withReadModel(leg, async (readModel) => {
      const run = snapshot({ projectionVersion: 1 });
      await projectRunRow(readModel.em(), run);
      const line = (i: number) => ({
        dedupeKey: `out:${i}`,
        kind: 'log.stdout' as const,
        stream: 'stdout' as const,
        ts: new Date().toISOString(),
        payload: { text: `line ${i}` },
      });
      t.is(
        await appendRunEvents(
          readModel.em(),
          run.id,
          Array.from({ length: 700 }, (_, i) => line(i)),
        ),
        700,
      );
      // A retried poll reads the same lines again, and more: only the new ones are written.
      const again = Array.from({ length: 2_600 }, (_, i) => line(i));
      t.is(await appendRunEvents(readModel.em(), run.id, again), 1_900);
      const rows = await readModel.rows<{ seq: number; dedupe_key: string }>(
        'select seq, dedupe_key from run_events where run_id = ? order by seq',
        [run.id],
      );
      t.is(rows.length, 2_600);
      t.deepEqual(
        rows.map((row) => Number(row.seq)),
        Array.from({ length: 2_600 }, (_, i) => i + 1),
      );
      t.is(rows[1_999]!.dedupe_key, 'out:1999');
    });
  });

  test(`${leg}: a NUL in agent output or a run's text is stored as U+FFFD (PostgreSQL refuses NUL)`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    await withReadModel(leg, async (readModel) => {
      const run = snapshot({ projectionVersion: 1 });
      await projectRunRow(readModel.em(), run);
      await projectRunRow(readModel.em(), { ...run, previewFailureMessage: 'bad\u0000byte', projectionVersion: 2 });
      const written = await appendRunEvents(readModel.em(), run.id, [
        {
          dedupeKey: 'stdout:0',
          kind: 'log.stdout',
          stream: 'stdout',
          ts: new Date().toISOString(),
          payload: { text: 'a\u0000b', ['k\u0000']: ['\u0000'] },
        },
      ]);
      t.is(written, 1);
      const row = await readModel.em().findOneOrFail(RunEntity, { id: run.id });
      t.is(row.previewFailureMessage, 'bad\uFFFDbyte');
      const [event] = await readModel.em().find(RunEventEntity, { runId: run.id });
      t.deepEqual(event!.payload, { text: 'a\uFFFDb', ['k\uFFFD']: ['\uFFFD'] });
    });
  });

  test(`${leg}: an event's ts never runs backwards against its seq, whatever clock stamped it`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    await withReadModel(leg, async (readModel) => {
      const run = snapshot({ projectionVersion: 1 });
      await projectRunRow(readModel.em(), run);
      const at = (key: string, ts: string) => ({
        dedupeKey: key,
        kind: 'log.stdout' as const,
        stream: 'stdout' as const,
        ts,
        payload: { text: key },
      });
      await appendRunEvents(readModel.em(), run.id, [at('terminal', '2026-11-23T10:00:05.000Z')]);
      // A stdout line read before the end but written after it, and a batch out of order.
      await appendRunEvents(readModel.em(), run.id, [at('late', '2026-11-23T10:00:03.000Z')]);
      await appendRunEvents(readModel.em(), run.id, [
        at('x', '2026-11-23T10:00:09.000Z'),
        at('y', '2026-11-23T10:00:07.000Z'),
      ]);
      const rows = await readModel.em().find(RunEventEntity, { runId: run.id }, { orderBy: { seq: 'asc' } });
      t.deepEqual(
        rows.map((row) => [row.dedupeKey, row.ts.toISOString()]),
        [
          ['terminal', '2026-11-23T10:00:05.000Z'],
          ['late', '2026-11-23T10:00:05.000Z'],
          ['x', '2026-11-23T10:00:09.000Z'],
          ['y', '2026-11-23T10:00:09.000Z'],
        ],
      );
    });
  });

  test(`${leg}: events for a run with no row are refused (the workflow projects first)`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    await withReadModel(leg, async (readModel) => {
      await t.throwsAsync(
        appendRunEvents(readModel.em(), 'run_000000000000', [
          { dedupeKey: 'x', kind: 'log.stdout', stream: null, ts: new Date().toISOString(), payload: null },
        ]),
        { message: /no read-model row/ },
      );
    });
  });
}

for (const leg of DATABASE_LEGS) {
  test(`${leg}: two processes' worth of migrate() at once: one applies every migration, the other none`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    const scratch = leg === 'postgresql' ? await createScratchPostgresDatabase(suitePostgresUrl()!) : undefined;
    const url = scratch?.url ?? join(mkdtempSync(join(tmpdir(), 'svc-db-')), 'svc.sqlite');
    const [first, second] = [await initORM({ databaseUrl: url }), await initORM({ databaseUrl: url })];
    try {
      const applied = await Promise.all([migrate(first!), migrate(second!)]);
      t.deepEqual(applied.map((names) => names.length).sort(), [0, applied.flat().length]);
      t.true(applied.flat().length > 0);
    } finally {
      await first!.close();
      await second!.close();
      await scratch?.drop();
    }
  });

  test(`${leg}: the sweep removes ended runs' sandboxes and services, not a live preview's`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    await withReadModel(leg, async (readModel) => {
      const longAgo = '2026-11-01T00:00:00.000Z';
      const ended = { state: 'succeeded' as const, endedAt: longAgo, projectionVersion: 1 };
      const previewing = snapshot({ ...ended, previewState: 'live', previewPort: 8080, previewHost: '10.0.0.7' });
      const previewed = snapshot({ ...ended, previewState: 'torn-down' });
      const running = snapshot({ state: 'running', projectionVersion: 1 });
      for (const run of [previewing, previewed, running]) await projectRunRow(readModel.em(), run);
      t.is((await readModel.em().findOneOrFail(RunEntity, { id: previewing.id })).previewHost, '10.0.0.7');
      const sandboxes = [
        previewing.id,
        `${previewing.id}-finalize`,
        `${previewing.id}-preview`,
        `${previewed.id}-preview`,
        `${previewed.id}-services`,
        `${previewed.id}-service-db-2`,
        running.id,
        `${running.id}-services`,
        `${running.id}-service-db`,
      ];
      const removed: string[] = [];
      const swept = await sweepLeftovers(
        async () => sandboxes.map((sandbox) => ({ id: `c-${sandbox}`, sandbox })),
        async (id) => void removed.push(id),
        readModel,
        new Date(),
      );
      t.deepEqual(swept, [
        `c-${previewing.id}`,
        `c-${previewing.id}-finalize`,
        `c-${previewed.id}-preview`,
        `c-${previewed.id}-services`,
        `c-${previewed.id}-service-db-2`,
      ]);
      t.deepEqual(removed, swept);
    });
  });
}
