// The state of one planRunWorkflow execution (workflows/plan-run/plan-run.workflow.ts registers the
// message handlers that change it): the plan-run snapshot, the cancel request, the latest news of
// every child run, and the plan-run's ways to tell the world (publish, finish, cancel).
import {
  allHandlersFinished,
  condition,
  getExternalWorkflowHandle,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { PlanEventInput } from '../../activities/index.ts';
import type { RunEventKind } from '../../core/event-kinds.ts';
import {
  initialPlanRunSnapshot,
  isInFlightChild,
  type ChildRunProgress,
  type PlanChild,
  type PlanRunOutcome,
  type PlanRunSnapshot,
  type PlanRunWorkflowInput,
} from '../../core/plan-model.ts';
import { pullRequestWorkflowId } from '../../core/run-workflows.ts';
import { SvcState } from '../../core/search-attributes.ts';
import { planReadModel } from '../activity-proxies.ts';
import { cancelSignal, type CancelRequest } from '../messages.ts';
import { now } from '../run/events.ts';

/** An event of the plan-run, keyed so a replayed projection writes it once. */
export interface PlanEvent {
  key: string;
  kind: RunEventKind;
  payload: Record<string, unknown>;
}

export class PlanRunExecution {
  readonly input: PlanRunWorkflowInput;
  readonly plan: PlanRunSnapshot;
  /** The first cancel wins. */
  cancelRequest: CancelRequest | null = null;
  /** The latest news of every child run, by run id: kept even when it comes before its start is recorded. */
  readonly news = new Map<string, Omit<ChildRunProgress, 'planRunId' | 'seq'>>();
  /** Grows with every piece of news: waiters compare it with what they have seen. */
  newsVersion = 0;
  /** The last child merged, for `plan_run.advanced`. */
  lastMergedSeq: number | null = null;
  /** The run a retry replaces, for `plan_run.child_retried`. */
  retriedFrom: { runId: string; failureReason: string | null } | null = null;

  constructor(input: PlanRunWorkflowInput) {
    this.input = input;
    this.plan = initialPlanRunSnapshot(input);
  }

  /** The first cancel wins. */
  requestCancel(request: CancelRequest): void {
    this.cancelRequest ??= request;
  }

  /** A child run's news: its latest state, whatever order the news and the child's start come in. */
  receiveNews(progress: ChildRunProgress): void {
    this.news.set(progress.runId, progress);
    this.newsVersion += 1;
  }

  /** The plan-run and its events to the read model; the events go to the log of the child run they concern. */
  async publish(events: PlanEvent[], runId: string | null = this.#latestRunId()): Promise<void> {
    const { plan } = this;
    plan.projectionVersion += 1;
    const planEvents: PlanEventInput[] = runId
      ? events.map((event) => ({
          runId,
          event: {
            dedupeKey: `plan:${plan.id}:${plan.resumedAt ?? 'first'}:${event.key}`,
            kind: event.kind,
            stream: 'system',
            ts: now(),
            payload: { planRunId: plan.id, ...event.payload },
          },
        }))
      : [];
    await planReadModel.projectPlanRun({
      snapshot: { ...plan, children: plan.children.map((child) => ({ ...child })) },
      events: planEvents,
    });
  }

  /**
   * The events of a child's dispatch: dispatched, advanced (when a merged child came before) and
   * child_retried (when this run replaces one that hit a provider error, which it then forgets).
   */
  dispatchedEvents(child: PlanChild, runId: string): PlanEvent[] {
    const events: PlanEvent[] = [
      {
        key: `dispatched:${runId}`,
        kind: 'plan_run.dispatched',
        payload: { seq: child.seq, seedId: child.seedId, runId, executionProjectId: this.plan.projectId },
      },
    ];
    if (this.lastMergedSeq !== null)
      events.push({
        key: `advanced:${child.seq}`,
        kind: 'plan_run.advanced',
        payload: { mergedChildSeq: this.lastMergedSeq, dispatchedChildSeq: child.seq },
      });
    if (this.retriedFrom)
      events.push({
        key: `retried:${runId}`,
        kind: 'plan_run.child_retried',
        payload: {
          previousRunId: this.retriedFrom.runId,
          failureReason: this.retriedFrom.failureReason,
          retryCount: child.retryCount,
        },
      });
    this.retriedFrom = null;
    return events;
  }

  update(child: PlanChild, patch: Partial<PlanChild>): void {
    Object.assign(child, patch, { updatedAt: now() });
  }

  /** Waits for news newer than `seen`, or a cancel; false on timeout. */
  nextNews(seen: number, timeoutMs?: number): Promise<unknown> {
    const arrived = () => this.cancelRequest !== null || this.newsVersion !== seen;
    return timeoutMs === undefined ? condition(arrived) : condition(arrived, timeoutMs);
  }

  /** The plan-run's end: projected with these events, once every handler is done. */
  async finish(
    state: 'succeeded' | 'failed' | 'cancelled',
    failureReason: string | null,
    events: PlanEvent[],
    cancelledChild: PlanRunOutcome['cancelledChild'] = {},
  ): Promise<PlanRunOutcome> {
    const { plan } = this;
    plan.state = state;
    plan.failureReason = failureReason;
    plan.endedAt = now();
    upsertSearchAttributes([{ key: SvcState, value: state }]);
    await this.publish(events);
    await condition(allHandlersFinished);
    return {
      planRunId: plan.id,
      state,
      failureReason,
      children: plan.children,
      startedAt: plan.startedAt,
      cancelledChild,
      projectionVersion: plan.projectionVersion,
    };
  }

  /** Cancelled: the child run in flight gets a cancel of its own; an open PR stays what it is. */
  async cancel(): Promise<PlanRunOutcome> {
    const { plan, cancelRequest } = this;
    const inFlight = plan.children.find((child) => isInFlightChild(child) && child.runId);
    let cancelledChild: PlanRunOutcome['cancelledChild'] = {};
    const events: PlanEvent[] = [
      {
        key: 'cancelled',
        kind: 'plan_run.cancelled',
        payload: { reason: cancelRequest?.reason ?? null, requestedBy: cancelRequest?.requestedBy ?? 'operator' },
      },
    ];
    if (inFlight?.runId) {
      const request = { reason: `plan_run_cancelled:${plan.id}`, requestedBy: 'plan-run' };
      const runId = inFlight.runId;
      try {
        // A child that ended with its PR open has handed the PR over to a workflow of its own
        // (core/run-workflows.ts): the cancel stops that PR's loop.
        await getExternalWorkflowHandle(runId)
          .signal(cancelSignal, request)
          .catch((error: unknown) => {
            if (inFlight.state !== 'pr_open') throw error;
            return getExternalWorkflowHandle(pullRequestWorkflowId(runId)).signal(cancelSignal, request);
          });
        cancelledChild = { childSeq: inFlight.seq, runId: inFlight.runId };
      } catch (error) {
        events.push({
          key: `cancel_child_failed:${inFlight.seq}`,
          kind: 'plan_run.cancel_child_failed',
          payload: { seq: inFlight.seq, runId: inFlight.runId, message: (error as Error).message },
        });
      }
      // A child whose run was stopped did not finish.
      if (inFlight.state !== 'pr_open')
        this.update(inFlight, { state: 'failed', failureReason: 'child_cancelled', endedAt: now() });
    }
    return this.finish('cancelled', null, events, cancelledChild);
  }

  #latestRunId(): string | null {
    return [...this.plan.children].reverse().find((child) => child.runId)?.runId ?? null;
  }
}
