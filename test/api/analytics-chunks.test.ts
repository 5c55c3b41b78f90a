// The event-kind analytics of GET /analytics/behavior count agent output stored compactly (chunk
// rows: consecutive lines of one stream as one run_events row, db/run-event-chunks.ts) per line,
// as the events they were, not per row: on both databases.
import test from 'ava';
import type { EntityManager } from '@mikro-orm/sql';
import { RunEventEntity } from '../../db/entities/index.ts';
import { chunkRowValues, type ChunkableLine } from '../../db/run-event-chunks.ts';
import { DATABASE_LEGS, postgresOrSkip } from '../support/env.ts';
import { mined } from './analytics-events-fixture.ts';
import { D, seedAnalyticsRuns, WINDOW } from './analytics-fixture.ts';
import { analyticsLegs } from './analytics-legs.ts';

const lines = (stream: 'stdout' | 'stderr', texts: string[]): ChunkableLine[] =>
  texts.map((text, index) => ({ head: stream, offset: index * 100, kind: `log.${stream}`, stream, text }));

async function seedChunks(em: EntityManager): Promise<void> {
  await seedAnalyticsRuns(em);
  const row = (runId: string, values: Record<string, unknown>) =>
    em.create(RunEventEntity, { runId, ts: new Date(D), ...values } as never);
  // r1: a chunk of three stdout lines, one stdout line on its own row, a tool call.
  row('r1', chunkRowValues(lines('stdout', ['one', 'two', 'three']), 1));
  row('r1', { seq: 4, kind: 'log.stdout', stream: 'stdout', payload: { text: 'four' }, dedupeKey: 'stdout:400' });
  row('r1', { seq: 5, kind: 'tool_use', stream: 'system', payload: { name: 'Read' }, dedupeKey: 'seed:5' });
  // r2: a chunk of two stderr lines, then a chunk of two stdout lines.
  row('r2', chunkRowValues(lines('stderr', ['warn a', 'warn b']), 1));
  row('r2', chunkRowValues(lines('stdout', ['x', 'y']), 3));
  await em.flush();
}

const legs = analyticsLegs(seedChunks);
test.after.always(legs.closeAll);

for (const leg of DATABASE_LEGS)
  test(`${leg}: a chunk row counts as many events as it holds lines`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    const { readModel, service } = await legs.open(leg);
    t.is(await readModel.em().fork().count(RunEventEntity, {}), 5, 'five rows stored');
    const { mining } = await service.behavior(WINDOW);
    t.is(mining.events, 9, '3 + 1 + 1 in r1, 2 + 2 in r2');
    t.is(mining.eventKinds, 3);
    t.deepEqual(mining.byKind, [
      mined('log.stdout', 6, 2, 9),
      mined('log.stderr', 2, 1, 9),
      mined('tool_use', 1, 1, 9),
    ]);
  });
