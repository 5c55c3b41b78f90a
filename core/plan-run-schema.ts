// The API's PlanRun and PlanRun child JSON, declared once: the API validates and documents them from
// these schemas, their presenters are typed by them, the workflow's PlanRunSnapshot and PlanChild
// (core/plan-model.ts) derive from them, and the read model's entities are checked against them at
// compile time (db/entities/plan-run*.entity.ts). Add a field here first; the compiler then names
// every other place. Apart from plan-model.ts: zod stays out of the workflows' module graph.
import { z } from 'zod';
import { PLAN_RUN_CHILD_STATES, PLAN_RUN_SOURCES, PLAN_RUN_STATES } from './run-states.ts';

const timestamp = z.string().nullable();

/** A plan-run as every plan-runs route answers with it (a spectator's without some fields). */
export const planRunSchema = z.object({
  id: z.string(),
  planId: z.string().nullable(),
  source: z.enum(PLAN_RUN_SOURCES),
  projectId: z.string(),
  agentName: z.string(),
  promptTemplate: z.string(),
  ref: z.string().nullable(),
  providerOverride: z.string().nullable(),
  modelOverride: z.string().nullable(),
  maxCostUsd: z.number().nullable(),
  dispatcherHandle: z.string(),
  trigger: z.string(),
  state: z.enum(PLAN_RUN_STATES),
  failureReason: z.string().nullable(),
  createdAt: z.string(),
  startedAt: timestamp,
  endedAt: timestamp,
  resumedAt: timestamp,
});

/** A plan-run as the API presents it. */
export type PlanRunJson = z.infer<typeof planRunSchema>;

/** One child of a plan-run: a seed and the run that works on it. */
export const planRunChildSchema = z.object({
  planRunId: z.string(),
  seq: z.number().int(),
  seedId: z.string(),
  runId: z.string().nullable(),
  state: z.enum(PLAN_RUN_CHILD_STATES),
  createdAt: z.string(),
  updatedAt: z.string(),
  startedAt: timestamp,
  endedAt: timestamp,
  prMergedAt: timestamp,
  failureReason: z.string().nullable(),
});
/** A plan-run's child as the API presents it. */
export type PlanRunChildJson = z.infer<typeof planRunChildSchema>;
