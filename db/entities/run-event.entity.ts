import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { EventStream } from '../../core/run-states.ts';

// One line of a run's event log. `dedupeKey` makes every writer idempotent: an activity retried
// after a worker crash re-inserts the same keys and the unique index drops the repeats.
export const RunEventEntity = defineEntity({
  name: 'RunEvent',
  tableName: 'run_events',
  uniques: [{ properties: ['runId', 'seq'] }, { properties: ['runId', 'dedupeKey'] }],
  properties: {
    id: p.integer().primary().autoincrement(),
    runId: p.string().length(32),
    seq: p.integer(),
    ts: p.datetime(),
    kind: p.string().length(128),
    stream: p.string().$type<EventStream>().length(16).nullable(),
    payload: p.json<unknown>().nullable(),
    dedupeKey: p.string().length(255),
  },
});

export type RunEvent = InferEntity<typeof RunEventEntity>;
