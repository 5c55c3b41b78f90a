// planRunWorkflow: one plan-run, its children strictly one after another as child runWorkflows.
// Workflow id = plan-run id. Everything the coordinator knows is in this workflow's state and
// history (workflows/plan-run/execution.ts): a restart of any process replays it, and no child is
// ever dispatched twice. This file reads top-down: the message handlers, then the phases, begin →
// each child (dispatch → follow → await its merge) → end.
import {
  ActivityFailure,
  condition,
  isCancellation,
  ParentClosePolicy,
  setHandler,
  startChild,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import {
  childFailureFor,
  isSettledChild,
  type PlanChild,
  type PlanRunOutcome,
  type PlanRunWorkflowInput,
} from '../../core/plan-model.ts';
import { isTerminalRunState } from '../../core/run-states.ts';
import { runSearchAttributes, SvcPlanId, SvcState } from '../../core/search-attributes.ts';
import { planSetup } from '../activity-proxies.ts';
import { describeFailure } from '../failures.ts';
import { cancelPlanRunSignal, childRunProgressSignal, planRunSnapshotQuery } from '../messages.ts';
import { PlanRunExecution } from './execution.ts';
import { now } from '../run/events.ts';
import { runWorkflow } from '../run/run.workflow.ts';

type ChildEnd = { kind: 'done' } | { kind: 'failed'; reason: string; prUrl?: string | null } | { kind: 'cancelled' };

/**
 * One plan-run (workflow id = plan-run id): its children strictly in order, each a child
 * `runWorkflow` whose PR must be merged (or trivially merged: nothing to push) before the next
 * starts. A resume is a new execution of the same id, started from the children the last one
 * left (docs/plan-runs.md).
 */
export async function planRunWorkflow(input: PlanRunWorkflowInput): Promise<PlanRunOutcome> {
  const execution = new PlanRunExecution(input);
  setHandler(planRunSnapshotQuery, () => execution.plan);
  setHandler(cancelPlanRunSignal, (request) => execution.requestCancel(request));
  setHandler(childRunProgressSignal, (progress) => execution.receiveNews(progress));
  // Whatever fails for good (an activity out of retries, a bug), the plan-run still ends: failed,
  // with an event that says what broke. The child run in flight, if any, goes on on its own.
  try {
    return await phases(execution);
  } catch (error) {
    if (isCancellation(error) || execution.plan.endedAt !== null) throw error;
    const failure = describeFailure(error);
    return execution.finish('failed', 'plan_run_internal_failure', [
      { key: 'internal_failure', kind: 'plan_run.internal_failure', payload: { ...failure } },
    ]);
  }
}

/** The plan-run from start to its end: begin (or resume), each child in order, then succeed. */
async function phases(execution: PlanRunExecution): Promise<PlanRunOutcome> {
  const { plan, input } = execution;
  if (input.resume) {
    await execution.publish([
      {
        key: `resumed:${input.resume.resumedAt}`,
        kind: 'plan_run.resumed',
        payload: { reason: input.resume.reason, note: input.resume.note ?? null },
      },
    ]);
  } else {
    await execution.publish([]);
    if (execution.cancelRequest) return execution.cancel();
    plan.state = 'running';
    plan.startedAt = now();
    upsertSearchAttributes([{ key: SvcState, value: 'running' }]);
    await execution.publish([]);
  }

  for (const child of plan.children) {
    if (isSettledChild(child)) continue;
    const ended = await drive(execution, child);
    if (ended.kind === 'cancelled') return execution.cancel();
    if (ended.kind === 'failed') {
      execution.update(child, { state: 'failed', failureReason: ended.reason, endedAt: now() });
      return execution.finish('failed', ended.reason, [
        {
          key: `failed:${child.seq}:${child.runId ?? 'none'}`,
          kind: 'plan_run.failed',
          payload: { failedSeq: child.seq, reason: ended.reason, prUrl: ended.prUrl ?? null },
        },
      ]);
    }
  }
  return execution.finish('succeeded', null, [
    { key: 'succeeded', kind: 'plan_run.succeeded', payload: { children: plan.children.length } },
  ]);
}

/** One child from where it stands to its end: dispatched, followed, merged. */
async function drive(execution: PlanRunExecution, child: PlanChild): Promise<ChildEnd> {
  for (;;) {
    if (execution.cancelRequest) return { kind: 'cancelled' };
    if (child.state === 'pending') {
      const ended = await dispatch(execution, child);
      if (ended) return ended;
      continue;
    }
    if (child.state === 'dispatched' || child.state === 'running') {
      const followed = await follow(execution, child);
      if (followed === 'retry' || followed === 'pr_open') continue;
      return followed;
    }
    if (child.state === 'pr_open') return awaitMerge(execution, child);
    return { kind: 'done' };
  }
}

/** Dispatch: the child's seed read afresh; its run started as a child workflow, or why not. */
async function dispatch(execution: PlanRunExecution, child: PlanChild): Promise<ChildEnd | null> {
  const { plan, input } = execution;
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
      runTiming: {
        ...input.runTiming,
        prPollMinMs: input.timing.mergePollMs,
        prPollMaxMs: input.timing.mergePollMs,
      },
    });
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    return { kind: 'failed', reason: `dispatch_failed:${error.cause?.message ?? error.message}` };
  }
  if (prepared.kind === 'missing') return { kind: 'failed', reason: `child_seed_not_found:${child.seedId}` };
  if (prepared.kind === 'closed') {
    execution.update(child, { state: 'skipped', endedAt: now() });
    await execution.publish([
      { key: `skipped:${child.seq}`, kind: 'plan_run.skipped', payload: { seq: child.seq, seedId: child.seedId } },
    ]);
    return { kind: 'done' };
  }
  const runInput = prepared.input;
  try {
    const started = await startChild(runWorkflow, {
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
    // The plan follows the run's news (childRunProgress), not its workflow's close, which is Failed
    // or Canceled when the run ends so.
    started.result().catch(() => undefined);
  } catch (error) {
    return { kind: 'failed', reason: `dispatch_failed:${(error as Error).message}` };
  }
  execution.update(child, {
    state: 'dispatched',
    runId: runInput.runId,
    startedAt: child.startedAt ?? now(),
    prUrl: null,
  });
  // The run's first news comes once its row is in the read model, where this plan's events go.
  await condition(() => execution.news.has(runInput.runId) || execution.cancelRequest !== null);
  await execution.publish(execution.dispatchedEvents(child, runInput.runId), runInput.runId);
  return null;
}

/** Follows a dispatched run to its end: a PR to wait on, a retry, or the child's failure. */
async function follow(execution: PlanRunExecution, child: PlanChild): Promise<ChildEnd | 'pr_open' | 'retry'> {
  let seen = -1;
  for (;;) {
    const latest = execution.news.get(child.runId!);
    if (execution.cancelRequest) return { kind: 'cancelled' };
    if (latest && latest.state === 'running' && child.state === 'dispatched') {
      execution.update(child, { state: 'running' });
      await execution.publish([]);
    }
    if (latest && isTerminalRunState(latest.state)) {
      if (latest.state === 'succeeded' && latest.prUrl) {
        execution.update(child, { state: 'pr_open', prUrl: latest.prUrl });
        await execution.publish([
          {
            key: `waiting_for_merge:${child.runId}`,
            kind: 'plan_run.waiting_for_merge',
            payload: { seq: child.seq, prUrl: latest.prUrl },
          },
        ]);
        return 'pr_open';
      }
      if (latest.state === 'succeeded' && latest.emptyPush) {
        // Nothing to merge: the reference counts it as merged at once (a trivial merge).
        const mergedAt = now();
        execution.update(child, { state: 'merged', prMergedAt: mergedAt, endedAt: mergedAt });
        execution.lastMergedSeq = child.seq;
        await execution.publish([
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
        execution.retriedFrom = { runId: child.runId!, failureReason: latest.failureReason };
        execution.update(child, { state: 'pending', runId: null, retryCount: child.retryCount + 1 });
        return 'retry';
      }
      return {
        kind: 'failed',
        reason: latest.state === 'succeeded' ? 'child_succeeded_without_pr' : childFailureFor(latest)!,
      };
    }
    seen = execution.newsVersion;
    await execution.nextNews(seen);
  }
}

/** Waits, within the merge budget, for the child's PR to be merged. */
async function awaitMerge(execution: PlanRunExecution, child: PlanChild): Promise<ChildEnd> {
  const { plan, input } = execution;
  if (!execution.news.has(child.runId!)) {
    // A resumed plan-run did not start this run: ask the run itself how its PR stands.
    try {
      execution.news.set(child.runId!, await planSetup.describeRun({ runId: child.runId! }));
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      return { kind: 'failed', reason: `child_run_unavailable:${child.runId}` };
    }
  }
  const endedAt = execution.news.get(child.runId!)?.endedAt;
  const budgetFrom = Math.max(
    endedAt ? Date.parse(endedAt) : Date.now(),
    plan.resumedAt ? Date.parse(plan.resumedAt) : 0,
  );
  const deadline = input.timing.mergeTimeoutMs > 0 ? budgetFrom + input.timing.mergeTimeoutMs : null;
  for (;;) {
    const latest = execution.news.get(child.runId!)!;
    if (latest.prState === 'merged') {
      execution.update(child, { state: 'merged', prMergedAt: latest.prMergedAt ?? now(), endedAt: now() });
      execution.lastMergedSeq = child.seq;
      await execution.publish([
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
    if (execution.cancelRequest) return { kind: 'cancelled' };
    const remaining = deadline === null ? undefined : deadline - Date.now();
    if (remaining !== undefined && remaining <= 0)
      return { kind: 'failed', reason: 'child_pr_merge_timeout', prUrl: child.prUrl };
    await execution.nextNews(execution.newsVersion, remaining);
  }
}
