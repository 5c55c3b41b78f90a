// The gateway's plan-run half: start, cancel, resume planRunWorkflow. Every call goes through
// TemporalGateway.call (bounded by its deadline) and histories are read by the gateway. Resuming
// a finished plan-run starts a new execution of the same workflow id from the children its last
// execution ended with (its result, kept by Temporal).
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import {
  childrenToResume,
  initialPlanRunSnapshot,
  isTerminalPlanRunState,
  type PlanChild,
  type PlanRunOutcome,
  type PlanRunSnapshot,
  type PlanRunWorkflowInput,
} from '../../core/plan-model.ts';
import { SvcAgent, SvcKind, SvcPlanId, SvcProjectId, SvcState } from '../../core/search-attributes.ts';
import type { planRunWorkflow } from '../../workflows/plan-run/plan-run.workflow.ts';
import { cancelPlanRunSignal, planRunSnapshotQuery, type CancelRequest } from '../../workflows/messages.ts';
import { Errors } from '../errors.ts';
import { awaitResult, isClosed, isNotFound, toApiError, wrapConnectionError } from './temporal-errors.ts';
import type { TemporalGateway } from './temporal-gateway.ts';

export function planRunSearchAttributes(input: PlanRunWorkflowInput, state: string) {
  return [
    { key: SvcKind, value: 'plan-run' },
    { key: SvcProjectId, value: input.projectId },
    { key: SvcAgent, value: input.agent.name },
    { key: SvcState, value: state },
    ...(input.planId ? [{ key: SvcPlanId, value: input.planId }] : []),
  ];
}

export class PlanRunWorkflows {
  readonly #gateway: TemporalGateway;
  readonly #client: Client;
  readonly #taskQueue: string;

  constructor(gateway: TemporalGateway) {
    this.#gateway = gateway;
    this.#client = gateway.client;
    this.#taskQueue = gateway.taskQueue;
  }

  async start(input: PlanRunWorkflowInput): Promise<PlanRunSnapshot> {
    try {
      await this.#gateway.call(() =>
        this.#client.workflow.start<typeof planRunWorkflow>('planRunWorkflow', {
          workflowId: input.planRunId,
          taskQueue: this.#taskQueue,
          args: [input],
          workflowIdConflictPolicy: 'FAIL',
          typedSearchAttributes: planRunSearchAttributes(input, input.resume ? 'running' : 'queued'),
          memo: { projectId: input.projectId, agent: input.agent.name, planId: input.planId, source: input.source },
        }),
      );
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError)
        throw Errors.conflict(`plan-run ${input.planRunId} is already running`, 'nothing to resume while it runs');
      throw wrapConnectionError(error);
    }
    return initialPlanRunSnapshot(input);
  }

  /** The input the plan-run's first execution was started with; undefined when there is no such plan-run workflow. */
  async input(planRunId: string): Promise<PlanRunWorkflowInput | undefined> {
    return (await this.#gateway.startedWith<PlanRunWorkflowInput>(planRunId, 'planRunWorkflow'))?.input;
  }

  /**
   * Signals the cancel and waits (bounded) for the plan-run to end; undefined if it did not in
   * time; 'closed' when its workflow had ended already (its row is then repaired before this answers).
   */
  async cancel(
    planRunId: string,
    request: CancelRequest,
    waitMs = 30_000,
  ): Promise<PlanRunOutcome | 'closed' | undefined> {
    const handle = this.#client.workflow.getHandle<typeof planRunWorkflow>(planRunId);
    try {
      await this.#gateway.call(() => handle.signal(cancelPlanRunSignal, request));
    } catch (error) {
      if (!isNotFound(error) && !isClosed(error)) throw toApiError(error);
      await this.#gateway.reconcile({ planRunIds: [planRunId] });
      return 'closed';
    }
    return awaitResult(handle, waitMs);
  }

  /**
   * A new execution from the first unfinished child: merged and skipped children are kept, a PR
   * that timed out is waited on again, the rest is dispatched afresh. 409 when the plan-run is
   * still running or has nothing left to do.
   */
  async resume(
    planRunId: string,
    note: string | null,
  ): Promise<{ planRun: PlanRunSnapshot; resumedChild: PlanChild | null; reason: string }> {
    const handle = this.#client.workflow.getHandle<typeof planRunWorkflow>(planRunId);
    let description;
    try {
      description = await this.#gateway.call(() => handle.describe());
    } catch (error) {
      if (isNotFound(error)) throw Errors.notFound(`plan-run "${planRunId}"`);
      throw wrapConnectionError(error);
    }
    if (description.status.name === 'RUNNING') {
      // An ended plan-run's workflow lingers a moment after its last projection: only a plan-run
      // the workflow itself still calls unfinished is "running".
      const snapshot = await this.#gateway.call(() => handle.query(planRunSnapshotQuery)).catch(() => undefined);
      if (!snapshot || !isTerminalPlanRunState(snapshot.state))
        throw Errors.conflict(`plan-run ${planRunId} is running: there is nothing to resume`);
    }
    const outcome = await handle.result().catch((error: unknown) => {
      throw toApiError(error);
    });
    if (outcome.state === 'succeeded')
      throw Errors.conflict(`plan-run ${planRunId} succeeded: there is nothing to resume`);
    const at = new Date().toISOString();
    const children = childrenToResume(outcome.children, at);
    if (!children) throw Errors.conflict(`plan-run ${planRunId} has no unfinished child to resume`);
    const input = (await this.input(planRunId))!;
    // The reference answers with the failure it resumes from; a cancelled plan-run (svc's
    // extension) resumes from `cancelled`.
    const reason = outcome.failureReason ?? outcome.state;
    const planRun = await this.start({
      ...input,
      resume: {
        children,
        resumedAt: at,
        reason,
        note,
        startedAt: outcome.startedAt,
        projectionVersion: outcome.projectionVersion,
      },
    });
    return {
      planRun,
      resumedChild: planRun.children.find((child) => child.state === 'pending' || child.state === 'pr_open') ?? null,
      reason,
    };
  }
}
