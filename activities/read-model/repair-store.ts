// Repairs of the read model from Temporal's account: a run or plan-run row that is not terminal
// while its workflow has closed gets the terminal state the workflow ended with (or the closest
// one when it ended without a result), an event saying so, and its lifecycle line. Idempotent: a
// row that is terminal already is left alone.
import type { EntityManager } from '@mikro-orm/sql';
import { isTerminalPlanRunState, type PlanChild } from '../../core/plan-model.ts';
import type { RunSnapshot } from '../../core/run-model.ts';
import { isTerminalRunState, type PrState, type RunFailureReason, type RunState } from '../../core/run-states.ts';
import { PlanRunChildEntity, PlanRunEntity, RunEntity } from '../../db/entities/index.ts';
import { appendRunEvents, lifecycleTransitions, recordLifecycle } from './run-projection.ts';

export interface RunRepair {
  state: RunState;
  failureReason: RunFailureReason | null;
  prUrl?: string | null;
  prState?: PrState | null;
  /** What Temporal said of the workflow: its status, and its failure when it had one. */
  detail: Record<string, unknown>;
}

/** Answers whether the row was repaired (false: unknown, or terminal already). */
export async function repairRunRow(em: EntityManager, runId: string, repair: RunRepair): Promise<boolean> {
  const repaired = await em.transactional(async (tx) => {
    const row = await tx.findOne(RunEntity, { id: runId });
    if (!row || isTerminalRunState(row.state)) return false;
    const now = new Date();
    const transitions = lifecycleTransitions({ state: row.state, commitsAhead: row.commitsAhead ?? null }, {
      state: repair.state,
      commitsAhead: row.commitsAhead ?? null,
    } as RunSnapshot);
    tx.assign(row, {
      state: repair.state,
      failureReason: repair.failureReason,
      startedAt: row.startedAt ?? now,
      endedAt: now,
      prUrl: repair.prUrl ?? row.prUrl,
      prState: repair.prState ?? row.prState,
      projectionVersion: row.projectionVersion + 1,
      updatedAt: now,
    });
    await recordLifecycle(tx, runId, transitions);
    return true;
  });
  if (repaired) {
    await appendRunEvents(em, runId, [
      {
        dedupeKey: 'reconciled',
        kind: 'run.reconciled',
        stream: 'system',
        ts: new Date().toISOString(),
        payload: { state: repair.state, failureReason: repair.failureReason, ...repair.detail },
      },
    ]);
  }
  return repaired;
}

export interface PlanRunRepair {
  state: 'succeeded' | 'failed' | 'cancelled';
  failureReason: string | null;
  /** The children as the workflow left them, when it returned them. */
  children: PlanChild[] | null;
}

export async function repairPlanRunRow(em: EntityManager, planRunId: string, repair: PlanRunRepair): Promise<boolean> {
  return em.transactional(async (tx) => {
    const row = await tx.findOne(PlanRunEntity, { id: planRunId });
    if (!row || isTerminalPlanRunState(row.state)) return false;
    const now = new Date();
    tx.assign(row, {
      state: repair.state,
      failureReason: repair.failureReason,
      endedAt: now,
      projectionVersion: row.projectionVersion + 1,
      updatedAt: now,
    });
    for (const child of repair.children ?? []) {
      await tx.nativeUpdate(
        PlanRunChildEntity,
        { planRunId, seq: child.seq },
        { state: child.state, failureReason: child.failureReason, runId: child.runId, updatedAt: now },
      );
    }
    return true;
  });
}
