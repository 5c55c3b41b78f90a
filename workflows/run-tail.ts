// The tail of runWorkflow after a successful agent: finalize through the sandbox (intent →
// result), then salvage or measure and open the pull request; and, once the run is terminal,
// follow its pull request until it is merged or closed.
import { ActivityFailure, condition, sleep, uuid4 } from '@temporalio/workflow';
import type { RunEventInput } from '../activities/index.ts';
import {
  finalizeVerdict,
  unpostedResult,
  withDelivery,
  type FinalizeIntent,
  type FinalizeResult,
  type FinalizeVerdict,
} from '../core/finalize.ts';
import type { RunSnapshot, RunTiming } from '../core/run-model.ts';
import { finalizeIo, finalizerStart } from './activity-proxies.ts';

export interface FinalizeChannel {
  intent: FinalizeIntent | null;
  result: FinalizeResult | null;
}

/** Writes the run and these events to the read model (RunExecution.publish). */
type Publish = (events: RunEventInput[]) => Promise<void>;

export async function finalizeWork(
  run: RunSnapshot,
  args: { baseBranch: string; timing: RunTiming; channel: FinalizeChannel; publish: Publish },
): Promise<FinalizeVerdict> {
  const { channel, publish } = args;
  const branch = run.branch!;
  // The sandbox hands its work over as a bundle; svc pushes it (the sandbox holds no credential).
  channel.intent = {
    version: 1,
    attemptId: uuid4(),
    branch,
    push: false,
    handoff: 'bundle',
    artifacts: [],
    commit: [],
    baseBranch: args.baseBranch,
  };
  const parkedAt = new Date(Date.now()).toISOString();
  await publish([
    {
      dedupeKey: 'finalize:intent',
      kind: 'finalize.intent_parked',
      stream: 'system',
      ts: parkedAt,
      payload: { attemptId: channel.intent.attemptId, branch, baseBranch: args.baseBranch },
    },
  ]);
  // The finalizer lives no longer than the wait for its result (and a minute to post it).
  await finalizerStart.startSandboxFinalizer({ runId: run.id, maxLifetimeMs: args.timing.finalizeTimeoutMs + 60_000 });

  const posted = await condition(() => channel.result !== null, args.timing.finalizeTimeoutMs);
  let result = posted ? channel.result! : unpostedResult('timeout');
  let delivered: Awaited<ReturnType<typeof finalizeIo.deliverBranch>> | null = null;
  if (!result.unposted && (result.commitsAhead ?? 0) > 0) {
    delivered = await finalizeIo.deliverBranch({
      projectId: run.projectId!,
      runId: run.id,
      branch,
      baseBranch: args.baseBranch,
    });
    result = withDelivery(result, delivered, branch);
  }
  const verdict = finalizeVerdict(result, run.ref !== null || run.targetBranch !== null);
  const at = new Date(Date.now()).toISOString();
  await publish([
    {
      dedupeKey: 'finalize:result',
      kind: 'finalize.result',
      stream: 'system',
      ts: at,
      payload: {
        pushed: result.pushed,
        commitsAhead: result.commitsAhead,
        dirty: result.dirty,
        dirtyPaths: result.dirtyPaths ?? [],
        stages: result.stages,
        unposted: result.unposted ?? null,
        // Intent parked → result (the sandbox's part, then svc's push): svc_run_finalize_seconds.
        durationMs: Date.parse(at) - Date.parse(parkedAt),
      },
    },
  ]);

  if (verdict.pushError && delivered) {
    const salvage = delivered.salvage ?? {
      salvageRef: null,
      salvagePath: null,
      notes: [delivered.error ?? 'nothing was handed over'],
    };
    run.salvageRef = salvage.salvageRef;
    run.salvagePath = salvage.salvagePath;
    await publish([
      {
        dedupeKey: 'reap:salvage',
        kind: salvage.salvageRef || salvage.salvagePath ? 'reap.workspace_salvaged' : 'reap.workspace_salvage_failed',
        stream: 'system',
        ts: at,
        payload: salvage,
      },
    ]);
  } else if (verdict.pushError) {
    const salvage = await finalizeIo.salvageWorkspace({
      runId: run.id,
      workspacePath: run.workspacePath!,
      baseBranch: args.baseBranch,
    });
    run.salvageRef = salvage.salvageRef;
    run.salvagePath = salvage.salvagePath;
    await publish([
      {
        dedupeKey: 'reap:salvage',
        kind: salvage.salvageRef || salvage.salvagePath ? 'reap.workspace_salvaged' : 'reap.workspace_salvage_failed',
        stream: 'system',
        ts: at,
        payload: salvage,
      },
    ]);
  }
  if (result.commitsAhead === 0) {
    run.commitsAhead = 0;
    run.filesChanged = 0;
    run.insertions = 0;
    run.deletions = 0;
    await publish([
      {
        dedupeKey: 'reap:empty_push',
        kind: 'reap.empty_push',
        stream: 'system',
        ts: at,
        payload: {
          dirtyPaths: result.dirtyPaths ?? [],
          droppedCommit: verdict.failureReason === 'dropped_commit',
          noChanges: verdict.noChanges,
        },
      },
    ]);
  }
  if (verdict.pushedBranch) {
    Object.assign(
      run,
      delivered?.summary ??
        (await finalizeIo.measureChanges({
          projectId: run.projectId!,
          runId: run.id,
          branch,
          baseBranch: args.baseBranch,
        })),
    );
    await publish([
      {
        dedupeKey: 'branch:pushed',
        kind: 'branch_pushed',
        stream: 'system',
        ts: at,
        payload: { branch, commitsAhead: run.commitsAhead },
      },
    ]);
    try {
      const pr = await finalizeIo.openPullRequest({
        projectId: run.projectId!,
        runId: run.id,
        branch,
        baseBranch: args.baseBranch,
        title: pullRequestTitle(run),
        body: pullRequestBody(run),
      });
      if ('skipped' in pr) {
        await publish([
          {
            dedupeKey: 'reap:pr_skipped',
            kind: 'reap.pr_open_skipped',
            stream: 'system',
            ts: at,
            payload: { reason: pr.skipped },
          },
        ]);
      } else {
        run.prUrl = pr.url;
        run.prState = pr.state;
        run.prMergedAt = pr.mergedAt;
        await publish([
          {
            dedupeKey: 'reap:pr_opened',
            kind: 'reap.pr_opened',
            stream: 'system',
            ts: at,
            payload: { prUrl: pr.url, branch, baseBranch: args.baseBranch },
          },
        ]);
      }
    } catch (error) {
      // A PR that cannot be opened does not undo pushed work: the run still succeeded.
      if (!(error instanceof ActivityFailure)) throw error;
      await publish([
        {
          dedupeKey: 'reap:pr_failed',
          kind: 'reap.pr_open_failed',
          stream: 'system',
          ts: at,
          payload: { message: error.cause?.message ?? error.message },
        },
      ]);
    }
  }
  return verdict;
}

function pullRequestTitle(run: RunSnapshot): string {
  const firstLine =
    run.prompt
      .split('\n')
      .find((line) => line.trim())
      ?.trim() ?? run.id;
  return `${run.seedId ? `[${run.seedId}] ` : ''}${firstLine.length > 72 ? `${firstLine.slice(0, 69)}...` : firstLine}`;
}

function pullRequestBody(run: RunSnapshot): string {
  return [
    `Opened by svc for run \`${run.id}\` (agent \`${run.agentName}\`).`,
    '',
    '```',
    run.prompt.slice(0, 4000),
    '```',
    '',
  ].join('\n');
}

/** Polls the PR with a growing interval until it is merged or closed (or the watch expires). */
export async function watchPullRequest(run: RunSnapshot, timing: RunTiming, publish: Publish): Promise<void> {
  if (!run.prUrl || run.prState !== 'open') return;
  const until = Date.now() + timing.prWatchMaxMs;
  let interval = timing.prPollMinMs;
  while (Date.now() < until) {
    await sleep(interval);
    interval = Math.min(interval * 2, timing.prPollMaxMs);
    let pr;
    try {
      pr = await finalizeIo.checkPullRequest({ prUrl: run.prUrl });
    } catch {
      continue; // the forge is down or rate-limited: look again later
    }
    if (pr.state === run.prState) continue;
    if (!(await publishPrState(run, pr, publish))) return;
  }
}

/** The PR's new state, on the run and in its log; answers whether the PR is still open. */
export async function publishPrState(
  run: RunSnapshot,
  pr: { state: NonNullable<RunSnapshot['prState']>; mergedAt: string | null },
  publish: Publish,
): Promise<boolean> {
  run.prState = pr.state;
  run.prMergedAt = pr.mergedAt;
  await publish([
    {
      dedupeKey: `pr:${pr.state}`,
      kind: 'pr.state_changed',
      stream: 'system',
      ts: new Date(Date.now()).toISOString(),
      payload: { prUrl: run.prUrl, prState: pr.state, prMergedAt: pr.mergedAt },
    },
  ]);
  return pr.state === 'open';
}
