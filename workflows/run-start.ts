// The start phase of runWorkflow (workflows/run.workflow.ts): the agent in its sandbox, with the
// prompt and the steering messages that arrived while it was queued. A run resumed after a pause at
// its cost cap (workflows/run-pause.ts) starts its next generation here too, on the same workspace.
//
// The startAgent activity itself writes the run's `running` projection (core/run-started.ts) and
// says so in its result: the workflow task after the start then runs no local activity (~20 ms less
// per run, and one billed marker less). No patch: the decision is the recorded result's, so a
// history whose activity did not project (recorded before, or run by an older worker) replays its
// local activity as it was. The version that projection takes is reserved when the activity is
// scheduled; whatever the workflow published meanwhile (a steering message) is newer, so the
// workflow then publishes the running run again itself.
import { upsertSearchAttributes } from '@temporalio/workflow';
import { resumePrompt } from '../core/cost-pause.ts';
import { foldIntoPrompt } from '../core/inbox.ts';
import type { RunOutcome } from '../core/run-model.ts';
import { runningRun, sandboxStartedEvent } from '../core/run-started.ts';
import { SvcState } from '../core/search-attributes.ts';
import { sandboxSetup } from './activity-proxies.ts';
import { now, type RunExecution } from './run-execution.ts';

type Workspace = Awaited<ReturnType<typeof sandboxSetup.prepareWorkspace>>;

/** Start: the agent in its sandbox, with the prompt and the messages that arrived while queued. */
export async function startAgent(execution: RunExecution, workspace: Workspace): Promise<RunOutcome | null> {
  const { input, run, pause } = execution;
  const task = pause.generation > 1 ? resumePrompt(input.prompt, run.costUsd ?? 0, run.maxCostUsd ?? 0) : input.prompt;
  const prompt = foldIntoPrompt(task, await execution.claimInbox());
  // A resumed run's next sandbox (run-pause.ts): its own events.
  const again = pause.generation > 1 ? `:g${pause.generation}` : '';
  execution.phase = 'starting';
  const projected = again ? null : execution.reserveProjection();
  const launched = await sandboxSetup.startAgent({
    runId: run.id,
    ...(again ? { generation: pause.generation } : {}),
    agent: input.agent,
    prompt,
    workspacePath: workspace.workspacePath,
    memoryLimitMiB: input.sandbox.memoryLimitMiB ?? null,
    network: input.sandbox.network ?? null,
    ...(input.sandbox.image ? { image: input.sandbox.image } : {}),
    ...(input.sandbox.cpuMillicores ? { cpuMillicores: input.sandbox.cpuMillicores } : {}),
    ...(input.sandbox.pod ? { pod: input.sandbox.pod } : {}),
    ...(projected ? { projectRunning: { snapshot: projected, workspaceKind: workspace.kind } } : {}),
  });
  run.sandboxRunId = launched.sandboxRunId;
  run.costBasis = launched.costBasis;
  if (launched.status === 'spawn_failed')
    return execution.finish('failed', 'spawn_failed', launched.endedAt ?? now(), { message: launched.message });
  if (launched.status === 'sandbox_failed')
    return execution.finish('failed', 'sandbox_failed', launched.endedAt ?? now(), { message: launched.message });
  if (launched.status === 'lost')
    return execution.finish('failed', 'sandbox_run_lost', now(), { message: launched.message });

  if (again) {
    await execution.publish([sandboxStartedEvent(run, launched, workspace.kind, again, now())]);
    return null;
  }
  const spawnedAt = launched.spawnedAt ?? now();
  const running = runningRun({ ...run }, { ...launched, spawnedAt }, workspace.kind);
  Object.assign(run, { state: running.snapshot.state, startedAt: running.snapshot.startedAt });
  upsertSearchAttributes([{ key: SvcState, value: 'running' }]);
  // The activity's projection stands unless the workflow published something newer meanwhile.
  const current =
    'runningProjected' in launched &&
    launched.runningProjected &&
    projected?.projectionVersion === run.projectionVersion;
  if (current) await execution.tellPlan();
  else await execution.publish(running.events);
  return null;
}
