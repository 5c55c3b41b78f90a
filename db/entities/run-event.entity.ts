import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { EventStream } from '../../core/run-states.ts';

// One line of a run's event log, or a chunk of its agent's output lines (`lastSeq` set: the lines
// seq..lastSeq of one stream, in `lines`; db/run-event-chunks.ts). `dedupeKey` makes every writer
// idempotent: an activity retried after a worker crash re-inserts the same keys and the unique
// index drops the repeats.
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
    /** A chunk row's last seq (its first is `seq`); null for a row of one event. */
    lastSeq: p.integer().nullable(),
    /** A chunk row's lines (their texts joined by newlines); null for a row of one event. */
    lines: p.text().nullable(),
  },
});

export type RunEvent = InferEntity<typeof RunEventEntity>;
