// The PR loop (docs/pr-loop.md): a run whose project asks for it (ciFixer, pr.followUps,
// pr.autoMerge) does not only follow its open PR, it answers it — a CI fix round when the head's
// checks fail, a review round when a reviewer requests changes (each a child runWorkflow pushing
// to the same branch), a merge when it is green, a comment when a limit stops it. The decisions
// are core/pr-loop.ts's; the forge's answers and the rounds' reports are activities.
import { condition, getExternalWorkflowHandle, ParentClosePolicy, startChild } from '@temporalio/workflow';
import {
  initialPrLoopState,
  nextPrAction,
  prTotalCost,
  type PrLoopAction,
  type PrLoopState,
  type PrStatus,
} from '../core/pr-loop.ts';
import type { RunOutcome, RunSnapshot, RunTiming, RunWorkflowInput } from '../core/run-model.ts';
import { outcomeOfClosedRun } from '../core/run-workflows.ts';
import { prLoopIo, runWorkflowControl } from './activity-proxies.ts';
import { describeFailure } from './failures.ts';
import { cancelSignal } from './messages.ts';
import { publishPrState } from './pr-follow.ts';
import { systemEvent, type Publish } from './run/events.ts';

/**
 * Follows the run's open PR and answers it, until it is merged or closed (or the watch ends).
 * Answers `stopped` when an operator stopped the loop (a cancel of the ended run): the PR is then
 * only followed, and a round under way is cancelled.
 */
export async function answerPullRequest(
  run: RunSnapshot,
  input: RunWorkflowInput,
  timing: RunTiming,
  publish: Publish,
  stopRequested: () => boolean,
): Promise<'stopped' | 'ended'> {
  const settings = input.prLoop!;
  if (!run.prUrl || run.prState !== 'open') return 'ended';
  const state = initialPrLoopState();
  const until = Date.now() + timing.prWatchMaxMs;
  let interval = timing.prPollMinMs;
  const stopped = async () => {
    await publish([systemEvent('pr_loop:stopped', 'pr_loop.stopped', {})]);
    return 'stopped' as const;
  };
  while (Date.now() < until) {
    if ((await condition(stopRequested, interval)) || stopRequested()) return stopped();
    interval = Math.min(interval * 2, timing.prPollMaxMs);
    let status: PrStatus;
    try {
      status = await prLoopIo.pullRequestStatus({
        prUrl: run.prUrl,
        logTailLines: settings.ciFixer?.logTailLines ?? 200,
        handledComments: state.handledComments,
        ciApps: settings.ciFixer?.apps,
      });
    } catch {
      continue; // the forge is down or rate-limited: look again later
    }
    if (status.state !== run.prState) {
      if (!(await publishPrState(run, status, publish))) return 'ended';
    }
    // A stop that came while the forge was asked wins over whatever the answer would start.
    if (stopRequested()) return stopped();
    const action = nextPrAction(settings, state, status, run.costUsd, Date.now());
    if (action.kind === 'wait') continue;
    // Something happened: the next look comes soon again.
    interval = timing.prPollMinMs;
    if (action.kind === 'comment') await comment(run, state, action.key, action.body, publish);
    else if (action.kind === 'merge') await merge(run, state, action, publish);
    else await followUp(run, state, action, publish, { stopRequested, baseBranch: status.baseBranch });
  }
  return 'ended';
}

async function comment(run: RunSnapshot, state: PrLoopState, key: string, body: string, publish: Publish) {
  state.notices.push(key);
  const posted = await prLoopIo.commentOnPullRequest({ prUrl: run.prUrl!, body }).then(
    () => true,
    () => false,
  );
  await publish([systemEvent(`pr_loop:comment:${key}`, 'pr_loop.commented', { key, body, posted })]);
}

async function merge(
  run: RunSnapshot,
  state: PrLoopState,
  action: Extract<PrLoopAction, { kind: 'merge' }>,
  publish: Publish,
) {
  state.mergeTried = action.sha;
  const answer = await prLoopIo
    .mergePullRequest({ prUrl: run.prUrl!, method: action.method, sha: action.sha })
    .catch((error: unknown) => ({ merged: false as const, refused: describeFailure(error).message }));
  await publish([
    systemEvent(`pr_loop:merge:${action.sha}`, answer.merged ? 'pr_loop.merge_requested' : 'pr_loop.merge_refused', {
      sha: action.sha,
      method: action.method,
      ...(answer.merged ? {} : { reason: answer.refused }),
    }),
  ]);
}

/** One round: a child run on the PR's branch; its cost counts toward the PR's. */
async function followUp(
  run: RunSnapshot,
  state: PrLoopState,
  action: Extract<PrLoopAction, { kind: 'follow_up' }>,
  publish: Publish,
  { stopRequested, baseBranch }: { stopRequested: () => boolean; baseBranch: string },
) {
  const round = state.rounds.length + 1;
  const kind = action.followUp;
  markHandled(state, action);
  const prepared = await prLoopIo
    .prepareFollowUp({ rootRunId: run.id, kind, round, role: action.role, prompt: action.prompt, baseBranch })
    .catch((error: unknown) => ({ problem: describeFailure(error).message }));
  if ('problem' in prepared) {
    await comment(
      run,
      state,
      `round:${round}:unprepared`,
      `svc could not start round ${round}: ${prepared.problem}`,
      publish,
    );
    return;
  }
  if (stopRequested()) return; // stopped while the round was prepared: it never starts
  const runId = prepared.input.runId;
  await publish([systemEvent(`pr_loop:round:${round}:started`, 'pr_loop.follow_up_started', { round, kind, runId })]);
  const outcome = (await roundOutcome(runId, prepared.input, stopRequested).catch(() => null)) as RunOutcome | null;
  state.rounds.push({ kind, runId, state: outcome?.state ?? 'failed', costUsd: outcome?.costUsd ?? null });
  run.prRounds = state.rounds.length;
  run.prCostUsd = prTotalCost(run.costUsd, state.rounds);
  await publish([
    systemEvent(`pr_loop:round:${round}:ended`, 'pr_loop.follow_up_ended', {
      round,
      kind,
      runId,
      state: outcome?.state ?? 'failed',
      failureReason: outcome?.failureReason ?? null,
      prCostUsd: run.prCostUsd,
    }),
  ]);
  await prLoopIo.reportFollowUp({ prUrl: run.prUrl!, runId, kind, round }).catch(() => undefined);
}

/** A round answers what started it once, whatever its outcome: a failed round is not re-run. */
function markHandled(state: PrLoopState, action: Extract<PrLoopAction, { kind: 'follow_up' }>): void {
  const kind = action.followUp;
  if (kind === 'ci_fix') {
    state.ciFixes += 1;
    state.lastCiFixAt = Date.now();
    state.handledShas.push(String(action.handles));
  } else if (kind === 'review') state.handledReviews.push(Number(action.handles));
  else if (kind === 'comment') state.handledComments.push(Number(action.handles));
  else state.handledConflicts.push(String(action.handles));
}

/** Runs a round to its end; a loop stopped meanwhile cancels it (the round then ends cancelled). */
async function roundOutcome(runId: string, input: RunWorkflowInput, stopRequested: () => boolean): Promise<RunOutcome> {
  const child = await startChild('runWorkflow', {
    workflowId: runId,
    args: [input],
    // The round ends on its own even if this run's workflow were terminated meanwhile.
    parentClosePolicy: ParentClosePolicy.ABANDON,
  });
  // A round that failed closes its workflow so, its outcome in the failure; a cancelled one keeps its
  // outcome (what it cost until stopped) in its memo.
  const result = (child.result() as Promise<RunOutcome>).catch(async (error: unknown) => {
    const outcome = outcomeOfClosedRun(runId, error);
    if (!outcome) throw error;
    if (outcome.state !== 'cancelled') return outcome;
    return (await runWorkflowControl.cancelledRunOutcome({ runId })) ?? outcome;
  });
  let done = false;
  void result.finally(() => (done = true)).catch(() => undefined);
  await condition(() => done || stopRequested());
  if (!done)
    await getExternalWorkflowHandle(runId)
      .signal(cancelSignal, { reason: 'the PR loop was stopped', requestedBy: 'operator' })
      .catch(() => undefined);
  return result;
}
