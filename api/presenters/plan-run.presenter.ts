// PlanRun and PlanRun child → the API's JSON (core/plan-run-schema.ts). Accepts read-model rows or
// the workflow's snapshot.
import type { PlanChild, PlanRunSnapshot } from '../../core/plan-model.ts';
import type { PlanRunChildJson, PlanRunJson } from '../../core/plan-run-schema.ts';
import type { PlanRun, PlanRunChild } from '../../db/entities/index.ts';
import { iso } from './run.presenter.ts';

export function presentPlanRun(plan: PlanRun | PlanRunSnapshot): PlanRunJson {
  return {
    id: plan.id,
    planId: plan.planId ?? null,
    source: plan.source,
    projectId: plan.projectId,
    agentName: plan.agentName,
    promptTemplate: plan.promptTemplate,
    ref: plan.ref ?? null,
    providerOverride: plan.providerOverride ?? null,
    modelOverride: plan.modelOverride ?? null,
    maxCostUsd: plan.maxCostUsd === null || plan.maxCostUsd === undefined ? null : Number(plan.maxCostUsd),
    dispatcherHandle: plan.dispatcherHandle,
    trigger: plan.trigger,
    state: plan.state,
    failureReason: plan.failureReason ?? null,
    createdAt: iso(plan.createdAt)!,
    startedAt: iso(plan.startedAt),
    endedAt: iso(plan.endedAt),
    resumedAt: iso(plan.resumedAt),
  };
}

export function presentPlanRunChild(child: PlanRunChild | (PlanChild & { planRunId: string })): PlanRunChildJson {
  return {
    planRunId: child.planRunId,
    seq: child.seq,
    seedId: child.seedId,
    runId: child.runId ?? null,
    state: child.state,
    createdAt: iso(child.createdAt)!,
    updatedAt: iso(child.updatedAt)!,
    startedAt: iso(child.startedAt),
    endedAt: iso(child.endedAt),
    prMergedAt: iso(child.prMergedAt),
    failureReason: child.failureReason ?? null,
  };
}
