// The PR loop (docs/pr-loop.md): a run whose project asks for it (ciFixer, pr.followUps,
// pr.autoMerge) does not only follow its open PR, it answers it — a CI fix round when the head's
// checks fail, a review round when a reviewer requests changes (each a child runWorkflow pushing
// to the same branch), a merge when it is green, a comment when a limit stops it. The decisions
// are core/pr-loop.ts's; the forge's answers and the rounds' reports are activities.
import { executeChild, ParentClosePolicy, sleep } from '@temporalio/workflow';
import type { RunEventInput } from '../activities/index.ts';
import {
  initialPrLoopState,
  nextPrAction,
  prTotalCost,
  type PrLoopAction,
  type PrLoopState,
  type PrStatus,
} from '../core/pr-loop.ts';
import type { RunOutcome, RunSnapshot, RunTiming, RunWorkflowInput } from '../core/run-model.ts';
import { prLoopIo } from './activity-proxies.ts';
import { describeFailure } from './failures.ts';
import { publishPrState } from './run-tail.ts';

type Publish = (events: RunEventInput[]) => Promise<void>;
const at = () => new Date(Date.now()).toISOString();

/** Follows the run's open PR and answers it, until it is merged or closed (or the watch ends). */
export async function answerPullRequest(
  run: RunSnapshot,
  input: RunWorkflowInput,
  timing: RunTiming,
  publish: Publish,
): Promise<void> {
  const settings = input.prLoop!;
  if (!run.prUrl || run.prState !== 'open') return;
  const state = initialPrLoopState();
  const until = Date.now() + timing.prWatchMaxMs;
  let interval = timing.prPollMinMs;
  while (Date.now() < until) {
    await sleep(interval);
    interval = Math.min(interval * 2, timing.prPollMaxMs);
    let status: PrStatus;
    try {
      status = await prLoopIo.pullRequestStatus({
        prUrl: run.prUrl,
        logTailLines: settings.ciFixer?.logTailLines ?? 200,
      });
    } catch {
      continue; // the forge is down or rate-limited: look again later
    }
    if (status.state !== run.prState) {
      if (!(await publishPrState(run, status, publish))) return;
    }
    const action = nextPrAction(settings, state, status, run.costUsd, Date.now());
    if (action.kind === 'wait') continue;
    // Something happened: the next look comes soon again.
    interval = timing.prPollMinMs;
    if (action.kind === 'comment') await comment(run, state, action.key, action.body, publish);
    else if (action.kind === 'merge') await merge(run, state, action, publish);
    else await followUp(run, state, action, publish);
  }
}

async function comment(run: RunSnapshot, state: PrLoopState, key: string, body: string, publish: Publish) {
  state.notices.push(key);
  const posted = await prLoopIo.commentOnPullRequest({ prUrl: run.prUrl!, body }).then(
    () => true,
    () => false,
  );
  await publish([
    {
      dedupeKey: `pr_loop:comment:${key}`,
      kind: 'pr_loop.commented',
      stream: 'system',
      ts: at(),
      payload: { key, body, posted },
    },
  ]);
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
    {
      dedupeKey: `pr_loop:merge:${action.sha}`,
      kind: answer.merged ? 'pr_loop.merge_requested' : 'pr_loop.merge_refused',
      stream: 'system',
      ts: at(),
      payload: { sha: action.sha, method: action.method, ...(answer.merged ? {} : { reason: answer.refused }) },
    },
  ]);
}

/** One round: a child run on the PR's branch; its cost counts toward the PR's. */
async function followUp(
  run: RunSnapshot,
  state: PrLoopState,
  action: Extract<PrLoopAction, { kind: 'follow_up' }>,
  publish: Publish,
) {
  const round = state.rounds.length + 1;
  const kind = action.followUp;
  if (kind === 'ci_fix') {
    state.ciFixes += 1;
    state.lastCiFixAt = Date.now();
    state.handledShas.push(String(action.handles));
  } else state.handledReviews.push(Number(action.handles));
  const prepared = await prLoopIo
    .prepareFollowUp({ rootRunId: run.id, kind, round, role: action.role, prompt: action.prompt })
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
  const runId = prepared.input.runId;
  await publish([
    {
      dedupeKey: `pr_loop:round:${round}:started`,
      kind: 'pr_loop.follow_up_started',
      stream: 'system',
      ts: at(),
      payload: { round, kind, runId },
    },
  ]);
  const outcome = (await executeChild('runWorkflow', {
    workflowId: runId,
    args: [prepared.input],
    // The round ends on its own even if this run's workflow were terminated meanwhile.
    parentClosePolicy: ParentClosePolicy.ABANDON,
  }).catch(() => null)) as RunOutcome | null;
  state.rounds.push({ kind, runId, state: outcome?.state ?? 'failed', costUsd: outcome?.costUsd ?? null });
  run.prRounds = state.rounds.length;
  run.prCostUsd = prTotalCost(run.costUsd, state.rounds);
  await publish([
    {
      dedupeKey: `pr_loop:round:${round}:ended`,
      kind: 'pr_loop.follow_up_ended',
      stream: 'system',
      ts: at(),
      payload: {
        round,
        kind,
        runId,
        state: outcome?.state ?? 'failed',
        failureReason: outcome?.failureReason ?? null,
        prCostUsd: run.prCostUsd,
      },
    },
  ]);
  await prLoopIo.reportFollowUp({ prUrl: run.prUrl!, runId, kind, round }).catch(() => undefined);
}
