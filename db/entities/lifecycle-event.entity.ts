import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

// One run lifecycle transition (run_dispatched, run_started, branch_pushed, pre_reap, post_reap, …), written in
// the same transaction as the run row it describes; GET /events/stream fans these out. Unique per
// (run, hook): a retried projection records a transition once.
export const LifecycleEventEntity = defineEntity({
  name: 'LifecycleEvent',
  tableName: 'lifecycle_events',
  uniques: [{ properties: ['runId', 'hook'] }],
  properties: {
    id: p.integer().primary().autoincrement(),
    runId: p.string().length(32),
    hook: p.string().length(32),
    state: p.string().length(16).nullable(),
    ts: p.datetime(),
  },
});

export type LifecycleEvent = InferEntity<typeof LifecycleEventEntity>;
