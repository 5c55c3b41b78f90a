// planRunWorkflow: one plan-run, its children strictly one after another as child runWorkflows.
// Workflow id = plan-run id. Everything the coordinator knows is in this workflow's state and
// history: a restart of any process replays it, and no child is ever dispatched twice.
import {
  ActivityFailure,
  allHandlersFinished,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  patched,
  ParentClosePolicy,
  setHandler,
  startChild,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { PATCHES } from './patches.ts';
import type { PlanEventInput } from '../activities/index.ts';
import {
  childFailureFor,
  initialPlanRunSnapshot,
  isInFlightChild,
  isSettledChild,
  type ChildRunProgress,
  type PlanChild,
  type PlanRunOutcome,
  type PlanRunWorkflowInput,
} from '../core/plan-model.ts';
import type { RunEventKind } from '../core/event-kinds.ts';
import { isTerminalRunState } from '../core/run-states.ts';
import { runSearchAttributes, SvcPlanId, SvcState } from '../core/search-attributes.ts';
import { planReadModel, planSetup } from './activity-proxies.ts';
import {
  cancelPlanRunSignal,
  cancelSignal,
  childRunProgressSignal,
  planRunSnapshotQuery,
  type CancelRequest,
} from './messages.ts';
import { describeFailure } from './failures.ts';
import { runWorkflow } from './run.workflow.ts';

interface PlanEvent {
  key: string;
  kind: RunEventKind;
  payload: Record<string, unknown>;
}

type ChildEnd = { kind: 'done' } | { kind: 'failed'; reason: string; prUrl?: string | null } | { kind: 'cancelled' };

/**
 * One plan-run (workflow id = plan-run id): its children strictly in order, each a child
 * `runWorkflow` whose PR must be merged (or trivially merged: nothing to push) before the next
 * starts. A resume is a new execution of the same id, started from the children the last one
 * left (docs/plan-runs.md).
 */
export async function planRunWorkflow(input: PlanRunWorkflowInput): Promise<PlanRunOutcome> {
  const plan = initialPlanRunSnapshot(input);
  let cancelRequest: CancelRequest | null = null;
  // The latest news of every child run, by run id: kept even when it arrives before the start of
  // that child is recorded here.
  const news = new Map<string, Omit<ChildRunProgress, 'planRunId' | 'seq'>>();
  let newsVersion = 0;
  setHandler(planRunSnapshotQuery, () => plan);
  setHandler(cancelPlanRunSignal, (request) => {
    cancelRequest ??= request;
  });
  setHandler(childRunProgressSignal, (progress) => {
    news.set(progress.runId, progress);
    newsVersion += 1;
  });
  const now = () => new Date(Date.now()).toISOString();
  const latestRunId = () => [...plan.children].reverse().find((child) => child.runId)?.runId ?? null;

  /** Projects the plan; its events go to the log of the child run they concern (the latest by default). */
  // publish(): the plan-run and its events to the read model (in the latest child run's log).
  const publish = async (events: PlanEvent[], runId: string | null = latestRunId()) => {
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
  };
  const update = (child: PlanChild, patch: Partial<PlanChild>) => Object.assign(child, patch, { updatedAt: now() });

  const finish = async (
    state: 'succeeded' | 'failed' | 'cancelled',
    failureReason: string | null,
    events: PlanEvent[],
    cancelledChild: PlanRunOutcome['cancelledChild'] = null,
  ): Promise<PlanRunOutcome> => {
    plan.state = state;
    plan.failureReason = failureReason;
    plan.endedAt = now();
    upsertSearchAttributes([{ key: SvcState, value: state }]);
    await publish(events);
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
  };

  const cancel = async (): Promise<PlanRunOutcome> => {
    const inFlight = plan.children.find((child) => isInFlightChild(child) && child.runId);
    let cancelledChild: PlanRunOutcome['cancelledChild'] = null;
    const events: PlanEvent[] = [
      {
        key: 'cancelled',
        kind: 'plan_run.cancelled',
        payload: { reason: cancelRequest?.reason ?? null, requestedBy: cancelRequest?.requestedBy ?? 'operator' },
      },
    ];
    if (inFlight?.runId) {
      try {
        await getExternalWorkflowHandle(inFlight.runId).signal(cancelSignal, {
          reason: `plan_run_cancelled:${plan.id}`,
          requestedBy: 'plan-run',
        });
        cancelledChild = { childSeq: inFlight.seq, runId: inFlight.runId };
      } catch (error) {
        events.push({
          key: `cancel_child_failed:${inFlight.seq}`,
          kind: 'plan_run.cancel_child_failed',
          payload: { seq: inFlight.seq, runId: inFlight.runId, message: (error as Error).message },
        });
      }
      // An open PR stays what it is; a child whose run was stopped did not finish.
      if (inFlight.state !== 'pr_open')
        update(inFlight, { state: 'failed', failureReason: 'child_cancelled', endedAt: now() });
    }
    return finish('cancelled', null, events, cancelledChild);
  };

  /** Waits for news of the child's run newer than `seen`, or a cancel; false on timeout. */
  const nextNews = async (seen: number, timeoutMs?: number): Promise<unknown> => {
    const arrived = () => cancelRequest !== null || newsVersion !== seen;
    return timeoutMs === undefined ? condition(arrived) : condition(arrived, timeoutMs);
  };

  let lastMergedSeq: number | null = null;
  let retriedFrom: { runId: string; failureReason: string | null } | null = null;

  const dispatch = async (child: PlanChild): Promise<ChildEnd | null> => {
    let prepared;
    try {
      prepared = await planSetup.preparePlanChild({
        planRunId: plan.id,
        seq: child.seq,
        projectId: plan.projectId,
        seedId: child.seedId,
        planId: plan.planId,
        agent: input.agent,
        promptTemplate: plan.promptTemplate,
        ref: plan.ref,
        providerOverride: plan.providerOverride,
        modelOverride: plan.modelOverride,
        maxCostUsd: plan.maxCostUsd,
        dispatcherHandle: plan.dispatcherHandle,
        // Children look at their open PR as often as the plan needs to know it merged.
        runTiming: { ...input.runTiming, prPollMinMs: input.timing.mergePollMs, prPollMaxMs: input.timing.mergePollMs },
      });
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      return { kind: 'failed', reason: `dispatch_failed:${error.cause?.message ?? error.message}` };
    }
    if (prepared.kind === 'missing') return { kind: 'failed', reason: `child_seed_not_found:${child.seedId}` };
    if (prepared.kind === 'closed') {
      update(child, { state: 'skipped', endedAt: now() });
      await publish([
        { key: `skipped:${child.seq}`, kind: 'plan_run.skipped', payload: { seq: child.seq, seedId: child.seedId } },
      ]);
      return { kind: 'done' };
    }
    const runInput = prepared.input;
    try {
      await startChild(runWorkflow, {
        workflowId: runInput.runId,
        args: [runInput],
        // The run is a run in its own right: it outlives the plan-run (a cancel reaches it by signal).
        parentClosePolicy: ParentClosePolicy.ABANDON,
        typedSearchAttributes: [
          ...runSearchAttributes(runInput),
          ...(plan.planId ? [{ key: SvcPlanId, value: plan.planId }] : []),
        ],
        memo: {
          agent: runInput.agent.name,
          projectId: runInput.projectId,
          trigger: runInput.trigger,
          planRunId: plan.id,
          childSeq: child.seq,
        },
      });
    } catch (error) {
      return { kind: 'failed', reason: `dispatch_failed:${(error as Error).message}` };
    }
    update(child, { state: 'dispatched', runId: runInput.runId, startedAt: child.startedAt ?? now(), prUrl: null });
    // The run's first news comes once its row is in the read model, where this plan's events go.
    await condition(() => news.has(runInput.runId) || cancelRequest !== null);
    const events: PlanEvent[] = [
      {
        key: `dispatched:${runInput.runId}`,
        kind: 'plan_run.dispatched',
        payload: { seq: child.seq, seedId: child.seedId, runId: runInput.runId, executionProjectId: plan.projectId },
      },
    ];
    if (lastMergedSeq !== null)
      events.push({
        key: `advanced:${child.seq}`,
        kind: 'plan_run.advanced',
        payload: { mergedChildSeq: lastMergedSeq, dispatchedChildSeq: child.seq },
      });
    if (retriedFrom)
      events.push({
        key: `retried:${runInput.runId}`,
        kind: 'plan_run.child_retried',
        payload: {
          previousRunId: retriedFrom.runId,
          failureReason: retriedFrom.failureReason,
          retryCount: child.retryCount,
        },
      });
    retriedFrom = null;
    await publish(events, runInput.runId);
    return null;
  };

  /** Follows a dispatched run to its end: a PR to wait on, a retry, or the child's failure. */
  const follow = async (child: PlanChild): Promise<ChildEnd | 'pr_open' | 'retry'> => {
    let seen = -1;
    for (;;) {
      const latest = news.get(child.runId!);
      if (cancelRequest) return { kind: 'cancelled' };
      if (latest && latest.state === 'running' && child.state === 'dispatched') {
        update(child, { state: 'running' });
        await publish([]);
      }
      if (latest && isTerminalRunState(latest.state)) {
        if (latest.state === 'succeeded' && latest.prUrl) {
          update(child, { state: 'pr_open', prUrl: latest.prUrl });
          await publish([
            {
              key: `waiting_for_merge:${child.runId}`,
              kind: 'plan_run.waiting_for_merge',
              payload: { seq: child.seq, prUrl: latest.prUrl },
            },
          ]);
          return 'pr_open';
        }
        if (latest.state === 'succeeded' && latest.emptyPush && patched(PATCHES.emptyChildMerges)) {
          // Nothing to merge: the reference counts it as merged at once (a trivial merge).
          const mergedAt = now();
          update(child, { state: 'merged', prMergedAt: mergedAt, endedAt: mergedAt });
          lastMergedSeq = child.seq;
          await publish([
            {
              key: `merged:${child.seq}`,
              kind: 'plan_run.merged',
              payload: { mergedChildSeq: child.seq, prUrl: null, mergedAt, trivial: true },
            },
          ]);
          return { kind: 'done' };
        }
        if (latest.failureReason === 'provider_error' && child.retryCount < 1) {
          // One fresh run for a transient provider failure, same seed and prompt.
          retriedFrom = { runId: child.runId!, failureReason: latest.failureReason };
          update(child, { state: 'pending', runId: null, retryCount: child.retryCount + 1 });
          return 'retry';
        }
        return {
          kind: 'failed',
          reason: latest.state === 'succeeded' ? 'child_succeeded_without_pr' : childFailureFor(latest)!,
        };
      }
      seen = newsVersion;
      await nextNews(seen);
    }
  };

  /** Waits, within the merge budget, for the child's PR to be merged. */
  const awaitMerge = async (child: PlanChild): Promise<ChildEnd> => {
    if (!news.has(child.runId!)) {
      // A resumed plan-run did not start this run: ask the run itself how its PR stands.
      try {
        news.set(child.runId!, await planSetup.describeRun({ runId: child.runId! }));
      } catch (error) {
        if (!(error instanceof ActivityFailure)) throw error;
        return { kind: 'failed', reason: `child_run_unavailable:${child.runId}` };
      }
    }
    const endedAt = news.get(child.runId!)?.endedAt;
    const budgetFrom = Math.max(
      endedAt ? Date.parse(endedAt) : Date.now(),
      plan.resumedAt ? Date.parse(plan.resumedAt) : 0,
    );
    const deadline = input.timing.mergeTimeoutMs > 0 ? budgetFrom + input.timing.mergeTimeoutMs : null;
    for (;;) {
      const latest = news.get(child.runId!)!;
      if (latest.prState === 'merged') {
        update(child, { state: 'merged', prMergedAt: latest.prMergedAt ?? now(), endedAt: now() });
        lastMergedSeq = child.seq;
        await publish([
          {
            key: `merged:${child.seq}`,
            kind: 'plan_run.merged',
            payload: { mergedChildSeq: child.seq, prUrl: child.prUrl, mergedAt: child.prMergedAt },
          },
        ]);
        return { kind: 'done' };
      }
      if (latest.prState === 'closed_unmerged')
        return { kind: 'failed', reason: 'pr_closed_without_merge', prUrl: child.prUrl };
      if (cancelRequest) return { kind: 'cancelled' };
      const remaining = deadline === null ? undefined : deadline - Date.now();
      if (remaining !== undefined && remaining <= 0)
        return { kind: 'failed', reason: 'child_pr_merge_timeout', prUrl: child.prUrl };
      await nextNews(newsVersion, remaining);
    }
  };

  const drive = async (child: PlanChild): Promise<ChildEnd> => {
    for (;;) {
      if (cancelRequest) return { kind: 'cancelled' };
      if (child.state === 'pending') {
        const ended = await dispatch(child);
        if (ended) return ended;
        continue;
      }
      if (child.state === 'dispatched' || child.state === 'running') {
        const followed = await follow(child);
        if (followed === 'retry' || followed === 'pr_open') continue;
        return followed;
      }
      if (child.state === 'pr_open') return awaitMerge(child);
      return { kind: 'done' };
    }
  };

  // The plan-run from start to its end.
  const lifecycle = async (): Promise<PlanRunOutcome> => {
    if (input.resume) {
      await publish([
        {
          key: `resumed:${input.resume.resumedAt}`,
          kind: 'plan_run.resumed',
          payload: { reason: input.resume.reason, note: input.resume.note ?? null },
        },
      ]);
    } else {
      await publish([]);
      if (cancelRequest) return cancel();
      plan.state = 'running';
      plan.startedAt = now();
      upsertSearchAttributes([{ key: SvcState, value: 'running' }]);
      await publish([]);
    }

    for (const child of plan.children) {
      if (isSettledChild(child)) continue;
      const ended = await drive(child);
      if (ended.kind === 'cancelled') return cancel();
      if (ended.kind === 'failed') {
        update(child, { state: 'failed', failureReason: ended.reason, endedAt: now() });
        return finish('failed', ended.reason, [
          {
            key: `failed:${child.seq}:${child.runId ?? 'none'}`,
            kind: 'plan_run.failed',
            payload: { failedSeq: child.seq, reason: ended.reason, prUrl: ended.prUrl ?? null },
          },
        ]);
      }
    }
    return finish('succeeded', null, [
      { key: 'succeeded', kind: 'plan_run.succeeded', payload: { children: plan.children.length } },
    ]);
  };

  // Whatever fails for good (an activity out of retries, a bug), the plan-run still ends: failed,
  // with an event that says what broke. The child run in flight, if any, goes on on its own.
  try {
    return await lifecycle();
  } catch (error) {
    if (isCancellation(error) || plan.endedAt !== null) throw error;
    const failure = describeFailure(error);
    return finish('failed', 'plan_run_internal_failure', [
      { key: 'internal_failure', kind: 'plan_run.internal_failure', payload: { ...failure } },
    ]);
  }
}
