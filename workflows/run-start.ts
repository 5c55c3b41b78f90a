// The start phase of runWorkflow (workflows/run.workflow.ts): the agent in its sandbox, with the
// prompt and the steering messages that arrived while it was queued. A run resumed after a pause at
// its cost cap (workflows/run-pause.ts) starts its next generation here too, on the same workspace.
//
// Since the `startProjectsRunning` patch, the startAgent activity itself writes the run's `running`
// projection (core/run-started.ts) and says so in its result: the workflow task after the start
// then runs no local activity (~20 ms less per run, one billed marker less). The patch is asked
// before the start, so a worker of the previous version fails that task (and a newer one takes it)
// instead of recording a local activity a newer one would not replay. An activity of the previous
// version (or one whose write failed) does not say it projected: the workflow then publishes. The
// version that projection takes is reserved when the activity is scheduled; whatever the workflow
// publishes meanwhile (a steering message) is newer, so the workflow then publishes again itself.
import { patched, upsertSearchAttributes } from '@temporalio/workflow';
import { resumePrompt } from '../core/cost-pause.ts';
import { foldIntoPrompt } from '../core/inbox.ts';
import type { RunOutcome, RunSnapshot } from '../core/run-model.ts';
import { runningRun, sandboxStartedEvent, type ProjectedRun } from '../core/run-started.ts';
import { SvcState } from '../core/search-attributes.ts';
import { sandboxSetup } from './activity-proxies.ts';
import { PATCHES } from './patches.ts';
import { now, type RunExecution } from './run-execution.ts';
import { watchdogsApply } from './run-watchdogs.ts';

type Workspace = Awaited<ReturnType<typeof sandboxSetup.prepareWorkspace>>;

/** Start: the agent in its sandbox, with the prompt and the messages that arrived while queued. */
export async function startAgent(execution: RunExecution, workspace: Workspace): Promise<RunOutcome | null> {
  const { input, run, pause } = execution;
  const task = pause.generation > 1 ? resumePrompt(input.prompt, run.costUsd ?? 0, run.maxCostUsd ?? 0) : input.prompt;
  const prompt = foldIntoPrompt(task, await execution.claimInbox());
  // A resumed run's next sandbox (run-pause.ts): its own events.
  const again = pause.generation > 1 ? `:g${pause.generation}` : '';
  execution.phase = 'starting';
  if (!again && watchdogsApply(execution.timing) && patched(PATCHES.startProjectsRunning))
    execution.startProjectsRunning = true;
  // The activity's input already holds the run's agent and, unless messages were folded in, its
  // prompt: the snapshot leaves both out (one copy of each in the payload).
  const projects = !again && execution.startProjectsRunning && prompt === input.prompt;
  const projected = projects ? execution.reserveProjection() : null;
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
    ...(projected ? { projectRunning: { snapshot: withoutCopies(projected), workspaceKind: workspace.kind } } : {}),
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
    projected !== null &&
    'runningProjected' in launched &&
    launched.runningProjected &&
    projected.projectionVersion === run.projectionVersion;
  if (current) await execution.tellPlan();
  else await execution.publish(running.events);
  return null;
}

/** The run for the start activity to project, without what its own input carries. */
function withoutCopies({ prompt: _prompt, renderedAgentJson: _agent, ...snapshot }: RunSnapshot): ProjectedRun {
  return snapshot;
}
