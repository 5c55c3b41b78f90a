import { FIELD_LIMITS } from '../../core/field-limits.ts';
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { PlanRunSnapshot } from '../../core/plan-model.ts';
import type { PlanRunJson } from '../../core/plan-run-schema.ts';
import type { PlanRunSource, PlanRunState } from '../../core/run-states.ts';

// The projection of one planRunWorkflow.
export const PlanRunEntity = defineEntity({
  name: 'PlanRun',
  tableName: 'plan_runs',
  indexes: [{ properties: ['projectId', 'createdAt'] }, { properties: ['state'] }],
  properties: {
    id: p.string().primary().length(32),
    planId: p.string().length(FIELD_LIMITS.name).nullable(),
    source: p.string().$type<PlanRunSource>().length(16),
    projectId: p.string().length(32),
    agentName: p.string().length(FIELD_LIMITS.name),
    promptTemplate: p.text(),
    ref: p.string().length(FIELD_LIMITS.name).nullable(),
    providerOverride: p.string().length(FIELD_LIMITS.name).nullable(),
    modelOverride: p.string().length(FIELD_LIMITS.name).nullable(),
    maxCostUsd: p.double().nullable(),
    dispatcherHandle: p.string().length(FIELD_LIMITS.name),
    trigger: p.string().length(FIELD_LIMITS.trigger),
    state: p.string().$type<PlanRunState>().length(16),
    failureReason: p.text().nullable(),
    createdAt: p.datetime(),
    startedAt: p.datetime().nullable(),
    endedAt: p.datetime().nullable(),
    resumedAt: p.datetime().nullable(),
    updatedAt: p.datetime(),
    /** Grows with every projection, so a late retry of an older projection never wins. */
    projectionVersion: p.integer().default(0),
  },
});

export type PlanRun = InferEntity<typeof PlanRunEntity>;

/** Compiles only when T is true: a compile-time check with no runtime trace. */
type Assert<T extends true> = T;
/**
 * Every field of the API's PlanRun (core/plan-run-schema.ts) and of the workflow's snapshot is a column (children
 * apart).
 */
export type EveryPlanRunFieldIsAColumn = Assert<
  [Exclude<keyof PlanRunSnapshot | keyof PlanRunJson, keyof PlanRun | 'children'>] extends [never] ? true : false
>;
