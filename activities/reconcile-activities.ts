// The reconciler's I/O: read-model rows that are not terminal are checked against their
// workflows, and a row whose workflow has closed is repaired from the workflow's own account.
import { heartbeat } from '@temporalio/activity';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { PlanRunOutcome } from '../core/plan-model.ts';
import type { RunOutcome } from '../core/run-model.ts';
import { outcomeOfClosedRun, pullRequestWorkflowId } from '../core/run-workflows.ts';
import { PlanRunEntity, RunEntity } from '../db/entities/index.ts';
import type { ReadModel } from '../db/orm.ts';
import type { SandboxSettings } from '../platform/sandbox-settings.ts';
import { previewSandboxDir } from './preview-activities.ts';
import { sweepEndedSandboxes, sandboxFiles, stopSandbox, sweepEndedPods } from '../sandbox/index.ts';
import { repairPlanRunRow, repairRunRow, type PlanRunRepair, type RunRepair } from './read-model/repair-store.ts';

export interface ReconcileActivityDeps {
  readModel: ReadModel;
  temporal: Client;
  /** The container backend's engine, whose leftover containers a pass removes. */
  sandbox?: Pick<SandboxSettings, 'mode' | 'container' | 'kubernetes'>;
  /** Where this worker's sandboxes keep their records (an orphaned preview's is stopped). */
  dataDir?: string;
}

export interface ReconcileRequest {
  /** Check these (an operator asked about them); otherwise every row untouched for `staleAfterMs`. */
  runIds?: string[];
  planRunIds?: string[];
  staleAfterMs?: number;
}

export interface ReconcileReport {
  examined: number;
  repairedRuns: string[];
  repairedPlanRuns: string[];
  /** Containers of runs that ended before the cutoff, removed (container backend). */
  sweptContainers?: string[];
  /** Pods of ended runs deleted by this pass (Kubernetes backend). */
  sweptPods?: string[];
  /** Runs whose preview was starting or live when their workflow was already closed: now `failed`. */
  orphanedPreviews?: string[];
}

type Closed = { status: string; result?: unknown; failure?: string };

const DEFAULT_STALE_AFTER_MS = 60_000;
const BATCH = 500;

export function createReconcileActivities(deps: ReconcileActivityDeps) {
  /** The workflow's end, or null while it runs. A workflow Temporal no longer knows is closed too. */
  const closed = async (workflowId: string): Promise<Closed | null> => {
    const handle = deps.temporal.workflow.getHandle(workflowId);
    try {
      const { status } = await handle.describe();
      if (status.name === 'RUNNING' || status.name === 'CONTINUED_AS_NEW') return null;
      if (status.name === 'COMPLETED') return { status: status.name, result: await handle.result() };
      // A run workflow closes Failed with its outcome in the failure's details.
      if (status.name === 'FAILED') {
        const outcome = await handle.result().then(
          () => null,
          (error: unknown) => outcomeOfClosedRun(workflowId, error),
        );
        if (outcome) return { status: status.name, result: outcome };
      }
      return { status: status.name };
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return { status: 'NOT_FOUND' };
      throw error;
    }
  };

  /**
   * A preview is the PR workflow's to end (workflows/pull-request.workflow.ts); one whose workflow
   * was closed under it (terminated) is marked failed, so the proxy stops sending browsers there,
   * then stopped (else the sweep, or its supervisor's lifetime, ends it) and its port can serve
   * another run.
   */
  const failOrphanedPreviews = async (): Promise<string[]> => {
    const em = deps.readModel.em();
    const up = { $in: ['starting', 'live'] as const };
    const rows = await em.find(RunEntity, { previewState: up }, { fields: ['id'], limit: BATCH });
    const failed: string[] = [];
    for (const row of rows) {
      heartbeat();
      const end = await closed(pullRequestWorkflowId(row.id));
      if (!end) continue;
      const message = `the PR's workflow ended (${end.status}) while its preview was up`;
      const changed = await em.nativeUpdate(
        RunEntity,
        { id: row.id, previewState: up },
        { previewState: 'failed', previewFailureMessage: message, updatedAt: new Date() },
      );
      if (!changed) continue;
      failed.push(row.id);
      // Its sandbox, if in this worker's data directory (a pod or container goes with it); else the
      // container or pod sweep takes it, or (unsandboxed, bubblewrap) its supervisor's lifetime.
      if (deps.dataDir) stopSandbox(sandboxFiles(previewSandboxDir(deps.dataDir, row.id)));
    }
    return failed;
  };

  return {
    async reconcileReadModel(request: ReconcileRequest): Promise<ReconcileReport> {
      const em = deps.readModel.em();
      const cutoff = new Date(Date.now() - (request.staleAfterMs ?? DEFAULT_STALE_AFTER_MS));
      const open = { $in: ['queued', 'running'] as const };
      const runs = await em.find(
        RunEntity,
        request.runIds ? { id: { $in: request.runIds }, state: open } : { state: open, updatedAt: { $lt: cutoff } },
        { fields: ['id', 'state'], limit: BATCH, orderBy: { updatedAt: 'asc' } },
      );
      const plans = await em.find(
        PlanRunEntity,
        request.planRunIds
          ? { id: { $in: request.planRunIds }, state: open }
          : request.runIds
            ? { id: { $in: [] } }
            : { state: open, updatedAt: { $lt: cutoff } },
        { fields: ['id', 'state'], limit: BATCH, orderBy: { updatedAt: 'asc' } },
      );
      const report: ReconcileReport = { examined: runs.length + plans.length, repairedRuns: [], repairedPlanRuns: [] };
      for (const row of runs) {
        heartbeat();
        const end = await closed(row.id);
        if (end && (await repairRunRow(em, row.id, runRepair(row.state, end)))) report.repairedRuns.push(row.id);
      }
      for (const row of plans) {
        heartbeat();
        const end = await closed(row.id);
        if (end && (await repairPlanRunRow(em, row.id, planRunRepair(end)))) report.repairedPlanRuns.push(row.id);
      }
      if (!request.runIds && !request.planRunIds) report.orphanedPreviews = await failOrphanedPreviews();
      if (deps.sandbox?.mode === 'container' && !request.runIds && !request.planRunIds)
        report.sweptContainers = await sweepEndedSandboxes(deps.sandbox.container.engine, deps.readModel, cutoff);
      if (deps.sandbox?.mode === 'kubernetes' && !request.runIds && !request.planRunIds)
        report.sweptPods = await sweepEndedPods(deps.sandbox.kubernetes, deps.readModel, cutoff);
      return report;
    },
  };
}

/** What a closed run workflow says of its run: its own result, or the closest failure. */
export function runRepair(rowState: string, end: Closed): RunRepair {
  const detail = { workflowStatus: end.status };
  if ((end.status === 'COMPLETED' || end.status === 'FAILED') && end.result) {
    const outcome = end.result as RunOutcome;
    return {
      state: outcome.state,
      failureReason: outcome.failureReason,
      prUrl: outcome.prUrl,
      prState: outcome.prState,
      detail,
    };
  }
  if (end.status === 'CANCELLED') return { state: 'cancelled', failureReason: null, detail };
  return { state: 'failed', failureReason: rowState === 'queued' ? 'never_started' : 'sandbox_run_lost', detail };
}

export function planRunRepair(end: Closed): PlanRunRepair {
  if (end.status === 'COMPLETED' && end.result) {
    const outcome = end.result as PlanRunOutcome;
    if (outcome.state === 'succeeded' || outcome.state === 'failed' || outcome.state === 'cancelled')
      return { state: outcome.state, failureReason: outcome.failureReason, children: outcome.children };
  }
  if (end.status === 'CANCELLED') return { state: 'cancelled', failureReason: null, children: null };
  return { state: 'failed', failureReason: 'plan_run_internal_failure', children: null };
}

export type ReconcileActivities = ReturnType<typeof createReconcileActivities>;
