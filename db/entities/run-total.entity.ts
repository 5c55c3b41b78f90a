import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { FIELD_LIMITS } from '../../core/field-limits.ts';

// How many runs there are and what they cost, per (project, agent, state): what GET /runs answers
// as `total` and `costTotalUsd` beside each page, read from a few rows instead of a pass over every
// run. Written only by the database's triggers on `runs` (migrations `run_totals`), so every writer
// of a run row (the projection, the reconciler, a copy into PostgreSQL) keeps it exact; svc never
// writes it. The cost is summed in whole nano-dollars: integers add and subtract without drift.
export const RunTotalEntity = defineEntity({
  name: 'RunTotal',
  tableName: 'run_totals',
  properties: {
    /** The run's project id, or '' for a run without one (a key cannot be null). */
    projectKey: p.string().primary().length(FIELD_LIMITS.id),
    agentName: p.string().primary().length(FIELD_LIMITS.name),
    state: p.string().primary().length(16),
    runs: p.bigint('number'),
    /** Runs with a cost. */
    priced: p.bigint('number'),
    costNanos: p.bigint('number'),
  },
});

export type RunTotal = InferEntity<typeof RunTotalEntity>;
