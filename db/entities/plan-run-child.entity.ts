import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { PlanRunChildState } from '../../core/run-states.ts';

export const PlanRunChildEntity = defineEntity({
  name: 'PlanRunChild',
  tableName: 'plan_run_children',
  indexes: [{ properties: ['runId'] }],
  properties: {
    planRunId: p.string().primary().length(32),
    seq: p.integer().primary(),
    seedId: p.string().length(255),
    runId: p.string().length(32).nullable(),
    state: p.string().$type<PlanRunChildState>().length(16),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    startedAt: p.datetime().nullable(),
    endedAt: p.datetime().nullable(),
    prMergedAt: p.datetime().nullable(),
    failureReason: p.text().nullable(),
    retryCount: p.integer().default(0),
  },
});

export type PlanRunChild = InferEntity<typeof PlanRunChildEntity>;
