// The start phase of runWorkflow (workflows/run.workflow.ts): the agent in its sandbox, with the
// prompt and the steering messages that arrived while it was queued. A run resumed after a pause at
// its cost cap (workflows/run-pause.ts) starts its next generation here too, on the same workspace.
//
// A run's first start is one activity that also cuts its workspace (activities/start-activities.ts):
// one workflow task and one activity fewer per run. That activity keeps what the workflow did
// between the two: it asks the workflow, after a clone, whether the run was cancelled meanwhile (the
// agent then never starts) and claims the messages steered meanwhile.
//
// The workflow alone writes the run's projection, `running` included: one writer, so every
// projection's version is newer than the one before (docs/decisions/0040-svc-1-0-baseline.md).
import { ActivityFailure, ApplicationFailure, upsertSearchAttributes } from '@temporalio/workflow';
import { resumePrompt } from '../core/cost-pause.ts';
import { foldIntoPrompt } from '../core/inbox.ts';
import type { RunOutcome } from '../core/run-model.ts';
import { runningEvents, sandboxStartedEvent } from '../core/run-started.ts';
import { NOT_LAUNCHED } from '../core/run-states.ts';
import { SvcState } from '../core/search-attributes.ts';
import { sandboxSetup, workspaceAndStart } from './activity-proxies.ts';
import { now, type RunExecution } from './run-execution.ts';

export type Workspace = Awaited<ReturnType<typeof sandboxSetup.prepareWorkspace>>;
type WorkspaceInput = Parameters<typeof sandboxSetup.prepareWorkspace>[0];

/** What a start left: the run's end if it ended there, else the workspace its agent works in. */
export type Started = { ended: RunOutcome } | { workspace: Workspace };

/** What the run's workspace is cut from. */
export function workspaceInput({ input, run }: RunExecution): WorkspaceInput {
  return {
    runId: run.id,
    projectId: run.projectId,
    workspacePath: input.sandbox.workspacePath,
    branch: input.branch ?? null,
    baseBranch: input.baseBranch ?? null,
    baseCommit: input.baseCommit,
    continueFromBranch: input.parent?.cloneKind === 'continue' ? input.parent.branch : null,
    ...(input.followUp?.kind === 'rebase' ? { mergeBase: true } : {}),
  };
}

/**
 * Start: the agent in its sandbox, with the prompt and the messages that arrived while queued.
 * `cut`: the workspace already cut (a resumed generation); null: the start activity cuts it.
 */
export async function startAgent(execution: RunExecution, cut: Workspace | null): Promise<Started> {
  const { input, run, pause } = execution;
  // Cancelled since the run was admitted: no workspace, no agent (the activity looks again after a clone).
  if (!cut && execution.cancelRequest) return { ended: await execution.cancelled() };
  const task = pause.generation > 1 ? resumePrompt(input.prompt, run.costUsd ?? 0, run.maxCostUsd ?? 0) : input.prompt;
  const claimed = await execution.claimInbox();
  const prompt = foldIntoPrompt(task, claimed);
  // A resumed run's next sandbox (run-pause.ts): its own events.
  const again = pause.generation > 1 ? `:g${pause.generation}` : '';
  execution.phase = 'starting';
  const start = {
    runId: run.id,
    ...(again ? { generation: pause.generation } : {}),
    agent: input.agent,
    memoryLimitMiB: input.sandbox.memoryLimitMiB ?? null,
    network: input.sandbox.network ?? null,
    ...(input.sandbox.image ? { image: input.sandbox.image } : {}),
    ...(input.sandbox.cpuMillicores ? { cpuMillicores: input.sandbox.cpuMillicores } : {}),
    ...(input.sandbox.pod ? { pod: input.sandbox.pod } : {}),
  };
  if (cut) {
    const launched = await sandboxSetup.startAgent({
      ...start,
      prompt,
      workspacePath: cut.workspacePath,
    });
    return afterStart(execution, { ...launched, workspace: cut }, again);
  }
  const launched = await cutWorkspaceAndStart(() =>
    workspaceAndStart.prepareAndStartAgent({
      ...start,
      prompt: task,
      claimed,
      workspace: workspaceInput(execution),
    }),
  );
  if ('neverStarted' in launched)
    return { ended: await execution.finish('failed', 'never_started', now(), launched.neverStarted) };
  run.workspacePath = launched.workspace.workspacePath;
  if (launched.status === 'cancelled') return { ended: await execution.cancelled() };
  return afterStart(execution, launched, again);
}

type Launched = Awaited<ReturnType<typeof sandboxSetup.startAgent>> & { workspace: Workspace };

/** The combined activity, or, for a failure before its launch (`not_launched`), a run that never started. */
async function cutWorkspaceAndStart<T>(activity: () => Promise<T>): Promise<T | { neverStarted: { message: string } }> {
  try {
    return await activity();
  } catch (error) {
    const cause = error instanceof ActivityFailure ? error.cause : null;
    if (!(cause instanceof ApplicationFailure) || cause.type !== NOT_LAUNCHED) throw error;
    return { neverStarted: { message: cause.message } };
  }
}

/** The run once its sandbox answered: failed to start, or running. */
async function afterStart(execution: RunExecution, launched: Launched, again: string): Promise<Started> {
  const { run } = execution;
  const { workspace } = launched;
  run.sandboxRunId = launched.sandboxRunId;
  run.costBasis = launched.costBasis;
  if (launched.status === 'spawn_failed')
    return ended(execution.finish('failed', 'spawn_failed', launched.endedAt ?? now(), { message: launched.message }));
  if (launched.status === 'sandbox_failed')
    return ended(
      execution.finish('failed', 'sandbox_failed', launched.endedAt ?? now(), { message: launched.message }),
    );
  if (launched.status === 'lost')
    return ended(execution.finish('failed', 'sandbox_run_lost', now(), { message: launched.message }));

  if (again) {
    await execution.publish([sandboxStartedEvent(run, launched, workspace.kind, again, now())]);
    return { workspace };
  }
  run.state = 'running';
  run.startedAt = launched.spawnedAt ?? now();
  upsertSearchAttributes([{ key: SvcState, value: 'running' }]);
  await execution.publish(runningEvents(run, launched, workspace.kind));
  return { workspace };
}

const ended = async (outcome: Promise<RunOutcome>): Promise<Started> => ({ ended: await outcome });
