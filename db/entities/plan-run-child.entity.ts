import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { PlanChild } from '../../core/plan-model.ts';
import type { PlanRunChildJson } from '../../core/plan-run-schema.ts';
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

/** Compiles only when T is true: a compile-time check with no runtime trace. */
type Assert<T extends true> = T;
/**
 * Every field of the API's child (core/plan-run-schema.ts) and of the workflow's is a column, but the
 * workflow's `prUrl`: the child run's own row holds its PR.
 */
export type EveryPlanRunChildFieldIsAColumn = Assert<
  [Exclude<keyof PlanChild | keyof PlanRunChildJson, keyof PlanRunChild | 'prUrl'>] extends [never] ? true : false
>;
