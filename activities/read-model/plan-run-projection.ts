// Writes of the plan-run projection: the plan row, its children, and the plan's events (kept in
// the event log of the child run they concern), in one transaction. Idempotent, like the run
// projection.
import type { EntityManager } from '@mikro-orm/sql';
import type { PlanRunSnapshot } from '../../core/plan-model.ts';
import { PlanRunChildEntity, PlanRunEntity } from '../../db/entities/index.ts';
import { fitColumns } from './fit-columns.ts';
import { insertRunEvents, type RunEventInput } from './run-projection.ts';

export interface PlanEventInput {
  runId: string;
  event: RunEventInput;
}

const toDate = (value: string | null) => (value === null ? null : new Date(value));

/** Upserts the plan row and its children, inside the caller's transaction, unless a newer projection is stored. */
async function writePlanRunRows(tx: EntityManager, snapshot: PlanRunSnapshot): Promise<void> {
  const existing = await tx.findOne(PlanRunEntity, { id: snapshot.id });
  if (existing && existing.projectionVersion > snapshot.projectionVersion) return;
  const { children, ...plan } = snapshot;
  const row = fitColumns(tx, PlanRunEntity, {
    ...plan,
    createdAt: new Date(plan.createdAt),
    startedAt: toDate(plan.startedAt),
    endedAt: toDate(plan.endedAt),
    resumedAt: toDate(plan.resumedAt),
    updatedAt: new Date(),
  });
  if (existing) tx.assign(existing, row);
  else tx.create(PlanRunEntity, row);
  const stored = new Map(
    (await tx.find(PlanRunChildEntity, { planRunId: snapshot.id })).map((child) => [child.seq, child]),
  );
  for (const child of children) {
    const { prUrl: _prUrl, ...fields } = child;
    const childRow = fitColumns(tx, PlanRunChildEntity, {
      ...fields,
      planRunId: snapshot.id,
      createdAt: new Date(child.createdAt),
      updatedAt: new Date(child.updatedAt),
      startedAt: toDate(child.startedAt),
      endedAt: toDate(child.endedAt),
      prMergedAt: toDate(child.prMergedAt),
    });
    const current = stored.get(child.seq);
    if (current) tx.assign(current, childRow);
    else tx.create(PlanRunChildEntity, childRow);
  }
}

/**
 * The plan's events and rows commit together: a reader that sees the plan-run ended has its last
 * events, and one that re-reads on a plan event (the dashboard) finds the rows it speaks of.
 */
export async function projectPlanRun(
  em: EntityManager,
  snapshot: PlanRunSnapshot,
  events: PlanEventInput[],
): Promise<void> {
  const byRun = new Map<string, RunEventInput[]>();
  for (const { runId, event } of events) byRun.set(runId, [...(byRun.get(runId) ?? []), event]);
  await em.transactional(async (tx) => {
    // A child run's row exists once its workflow projected it (the workflow waits for that); were it
    // missing this throws and the projection is retried, so a plan event is never lost.
    for (const [runId, runEvents] of byRun) await insertRunEvents(tx, runId, runEvents);
    await writePlanRunRows(tx, snapshot);
  });
}
