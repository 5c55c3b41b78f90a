// The finalize phase of runWorkflow (workflows/run/run.workflow.ts), after a successful agent:
// the sandbox hands its work over (intent → result), svc pushes it, then salvages or measures it and
// opens the pull request. The PR is followed after the run's end by workflows/pull-request.workflow.ts.
import { ActivityFailure, condition, uuid4 } from '@temporalio/workflow';
import { finalizeVerdict, unpostedResult, withDelivery, type FinalizeVerdict } from '../../core/finalize.ts';
import type { RunSnapshot } from '../../core/run-model.ts';
import { finalizeIo, finalizerStart } from '../activity-proxies.ts';
import { now, systemEvent } from './events.ts';
import type { RunExecution } from './execution.ts';

/** The run's work handed over, pushed and offered as a PR: answers how that ends the run. */
export async function finalizeWork(execution: RunExecution): Promise<FinalizeVerdict> {
  const { run, timing, finalize: channel } = execution;
  const baseBranch = execution.input.baseBranch!;
  const publish = (events: Parameters<RunExecution['publish']>[0]) => execution.publish(events);
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
    baseBranch: baseBranch,
  };
  const parkedAt = now();
  await publish([
    systemEvent('finalize:intent', 'finalize.intent_parked', {
      attemptId: channel.intent.attemptId,
      branch,
      baseBranch,
    }),
  ]);
  // The finalizer lives no longer than the wait for its result (and a minute to post it).
  await finalizerStart.startSandboxFinalizer({ runId: run.id, maxLifetimeMs: timing.finalizeTimeoutMs + 60_000 });

  const posted = await condition(() => channel.result !== null, timing.finalizeTimeoutMs);
  let result = posted ? channel.result! : unpostedResult('timeout');
  let delivered: Awaited<ReturnType<typeof finalizeIo.deliverBranch>> | null = null;
  if (!result.unposted && (result.commitsAhead ?? 0) > 0) {
    delivered = await finalizeIo.deliverBranch({
      projectId: run.projectId!,
      runId: run.id,
      branch,
      baseBranch: baseBranch,
    });
    result = withDelivery(result, delivered, branch);
  }
  const verdict = finalizeVerdict(result, run.ref !== null || run.targetBranch !== null);
  const at = now();
  await publish([
    systemEvent(
      'finalize:result',
      'finalize.result',
      {
        pushed: result.pushed,
        commitsAhead: result.commitsAhead,
        dirty: result.dirty,
        dirtyPaths: result.dirtyPaths ?? [],
        stages: result.stages,
        unposted: result.unposted ?? null,
        // Intent parked → result (the sandbox's part, then svc's push): svc_run_finalize_seconds.
        durationMs: Date.parse(at) - Date.parse(parkedAt),
      },
      at,
    ),
  ]);

  if (verdict.pushError && delivered) {
    const salvage = delivered.salvage ?? {
      salvageRef: null,
      salvagePath: null,
      notes: [delivered.error ?? 'nothing was handed over'],
    };
    run.salvageRef = salvage.salvageRef;
    run.salvagePath = salvage.salvagePath;
    await publish([salvageEvent(salvage, at)]);
  } else if (verdict.pushError) {
    const salvage = await finalizeIo.salvageWorkspace({
      runId: run.id,
      workspacePath: run.workspacePath!,
      baseBranch: baseBranch,
    });
    run.salvageRef = salvage.salvageRef;
    run.salvagePath = salvage.salvagePath;
    await publish([salvageEvent(salvage, at)]);
  }
  if (result.commitsAhead === 0) {
    run.commitsAhead = 0;
    run.filesChanged = 0;
    run.insertions = 0;
    run.deletions = 0;
    await publish([
      systemEvent(
        'reap:empty_push',
        'reap.empty_push',
        {
          dirtyPaths: result.dirtyPaths ?? [],
          droppedCommit: verdict.failureReason === 'dropped_commit',
          noChanges: verdict.noChanges,
        },
        at,
      ),
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
          baseBranch: baseBranch,
        })),
    );
    await publish([systemEvent('branch:pushed', 'branch_pushed', { branch, commitsAhead: run.commitsAhead }, at)]);
    try {
      const pr = await finalizeIo.openPullRequest({
        projectId: run.projectId!,
        runId: run.id,
        branch,
        baseBranch: baseBranch,
        title: pullRequestTitle(run),
        body: pullRequestBody(run),
      });
      if ('skipped' in pr) {
        await publish([systemEvent('reap:pr_skipped', 'reap.pr_open_skipped', { reason: pr.skipped }, at)]);
      } else {
        run.prUrl = pr.url;
        run.prState = pr.state;
        run.prMergedAt = pr.mergedAt;
        await publish([systemEvent('reap:pr_opened', 'reap.pr_opened', { prUrl: pr.url, branch, baseBranch }, at)]);
      }
    } catch (error) {
      // A PR that cannot be opened does not undo pushed work: the run still succeeded.
      if (!(error instanceof ActivityFailure)) throw error;
      await publish([
        systemEvent('reap:pr_failed', 'reap.pr_open_failed', { message: error.cause?.message ?? error.message }, at),
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

/** Where the work svc could not push went (a salvage ref or path), or that it could not be kept. */
function salvageEvent(salvage: { salvageRef: string | null; salvagePath: string | null }, at: string) {
  const kind = salvage.salvageRef || salvage.salvagePath ? 'reap.workspace_salvaged' : 'reap.workspace_salvage_failed';
  return systemEvent('reap:salvage', kind, salvage, at);
}
