// Prepare and start, phases of runWorkflow (workflows/run/run.workflow.ts): the run's workspace, cut
// from its project (or empty), then its agent in its sandbox, with the prompt and the steering
// messages that arrived while it was queued. A run resumed after a pause at its cost cap
// (workflows/run/pause.ts) starts its next generation here too, on the same workspace.
//
// A run's first start is one activity that also cuts its workspace (activities/start-activities.ts):
// one workflow task and one activity fewer per run. That activity keeps what the workflow did
// between the two: it asks the workflow, after a clone, whether the run was cancelled meanwhile (the
// agent then never starts) and claims the messages steered meanwhile.
import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { RunEnvironment, SetupOutcome } from '../../activities/environment-activities.ts';
import type { EnvironmentPlan } from '../../core/environment.ts';
import type { ServicePlan } from '../../core/environment-services.ts';
import { resumePrompt } from '../../core/cost-pause.ts';
import { foldIntoPrompt, inClaimOrder, type InboxItem } from '../../core/inbox.ts';
import { runningEvents, sandboxStartedEvent } from '../../core/run-started.ts';
import { projectSandbox } from '../../core/run-model.ts';
import { DISK_NEARLY_FULL, NOT_LAUNCHED, type RunFailureReason } from '../../core/run-states.ts';
import { SvcState } from '../../core/search-attributes.ts';
import { environmentSetup, environmentWatch, sandboxSetup, workspaceAndStart } from '../activity-proxies.ts';
import { now, systemEvent } from './events.ts';
import { isEnded, type Ended, type RunExecution } from './execution.ts';

export type Workspace = Awaited<ReturnType<typeof sandboxSetup.prepareWorkspace>>;
type WorkspaceInput = Parameters<typeof sandboxSetup.prepareWorkspace>[0];
type Launched = Awaited<ReturnType<typeof sandboxSetup.startAgent>>;

/** What the run's workspace is cut from. */
function workspaceInput({ input, run }: RunExecution): WorkspaceInput {
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

/** The sandbox the agent starts in: the same for every generation of the run. */
function sandboxOf({ input, run, pause, services, mcp }: RunExecution) {
  return {
    runId: run.id,
    ...(pause.generation > 1 ? { generation: pause.generation } : {}),
    ...(services ? { services } : {}),
    agent: input.agent,
    ...(input.repoContext ? { repoContext: input.repoContext } : {}),
    ...(mcp ? { mcp } : {}),
    ...projectSandbox(input.sandbox),
  };
}

/**
 * Prepare and start: one activity cuts the workspace and starts the agent there, with the prompt
 * and the messages that arrived while the run was queued. Answers the workspace, or the run's end:
 * cancelled meanwhile, never started (no workspace), or its sandbox failed to start.
 */
export async function prepareAndStart(execution: RunExecution): Promise<Workspace | Ended> {
  const { input, run } = execution;
  // Cancelled since the run was admitted: no workspace, no agent (the activity looks again after a clone).
  if (execution.cancelRequest) return execution.cancelled();
  const claimed = await execution.claimInbox();
  execution.phase = 'starting';
  const launched = await notLaunchedAsNotStarted(() =>
    workspaceAndStart.prepareAndStartAgent({
      ...sandboxOf(execution),
      prompt: input.prompt,
      claimed,
      workspace: workspaceInput(execution),
    }),
  );
  if ('notStarted' in launched) {
    const { reason, message } = launched.notStarted;
    return execution.finish('failed', reason, now(), { message });
  }
  const { workspace } = launched;
  run.workspacePath = workspace.workspacePath;
  if ('environment' in launched && launched.environment)
    return setUpThenStart(execution, launched.environment, workspace, claimed);
  if (launched.status === 'cancelled') return execution.cancelled();
  return running(execution, launched, workspace);
}

/** The agent started: the run is running, its start published. */
async function running(execution: RunExecution, launched: Launched, workspace: Workspace): Promise<Workspace | Ended> {
  const { run } = execution;
  const failed = await failedToStart(execution, launched);
  if (failed) return failed;
  run.state = 'running';
  run.startedAt = launched.spawnedAt ?? now();
  upsertSearchAttributes([{ key: SvcState, value: 'running' }]);
  await execution.publish(runningEvents(run, launched, workspace.kind));
  return workspace;
}

/**
 * A repository with an environment (.svc/environment.yaml at the base): an invalid file fails the
 * run at once; else its services start, its setup (if it has one) runs or its kept result is
 * mounted (a cancel stops it), and the agent starts once the services are ready, with the messages
 * claimed before and since. A failed or timed-out setup, or a service not ready, fails the run.
 */
async function setUpThenStart(
  execution: RunExecution,
  environment: RunEnvironment,
  workspace: Workspace,
  claimedBefore: InboxItem[],
): Promise<Workspace | Ended> {
  const { input } = execution;
  if ('invalid' in environment)
    return execution.finish('failed', 'environment_invalid', now(), { message: environment.invalid });
  const { plan } = environment;
  // The services start first (a backend without them refuses at once) and get ready while the setup runs.
  if (plan.services?.length) {
    const refused = await startServices(execution, plan.services);
    if (refused) return refused;
  }
  // A file with services or MCP servers only: nothing to set up.
  if (plan.setup !== null) {
    const ended = await setUp(execution, environment, workspace);
    if (ended) return ended;
  }
  if (plan.services?.length) {
    const ended = await servicesReady(execution, plan.services);
    if (ended) return ended;
  }
  execution.mcp = plan.mcp ?? null;
  const claimed = inClaimOrder([...claimedBefore, ...(await execution.claimInbox())]);
  const launched = await sandboxSetup.startAgent({
    ...sandboxOf(execution),
    prompt: foldIntoPrompt(input.prompt, claimed),
    workspacePath: workspace.workspacePath,
  });
  return running(execution, launched, workspace);
}

/** The environment's setup: the shared build of its key, or in place; its result mounted under the workspace. */
async function setUp(
  execution: RunExecution,
  environment: Exclude<RunEnvironment, { invalid: string }>,
  workspace: Workspace,
): Promise<Ended | null> {
  const { input, run } = execution;
  const { plan, key, commit, shared } = environment;
  await execution.publish([systemEvent('environment:building', 'environment.building', { key })]);
  const use = run.projectId
    ? await environmentSetup.useEnvironmentCache({
        projectId: run.projectId,
        key,
        commit,
        plan,
        sandbox: projectSandbox(input.sandbox),
        shared,
      })
    : ({ use: 'uncached', why: 'no project' } as const);
  let ready: { cached: boolean; durationMs: number; uncached?: string };
  if (use.use === 'uncached') {
    const outcome = await setUpInPlace(execution, environment, workspace);
    if (isEnded(outcome)) return outcome;
    ready = { cached: false, durationMs: outcome.durationMs, uncached: use.why };
  } else {
    const startedAt = Date.now();
    if (use.use === 'build') {
      const outcome = await followBuild(execution, use.workflowId, use.buildRunId, key);
      if (isEnded(outcome)) return outcome;
    }
    await environmentSetup.mountEnvironment({
      runId: run.id,
      projectId: run.projectId!,
      key,
      workspacePath: workspace.workspacePath,
    });
    ready = { cached: use.use === 'ready', durationMs: Date.now() - startedAt };
  }
  await execution.publish([systemEvent('environment:ready', 'environment.ready', { key, ...ready })]);
  return null;
}

/** The setup in the run's own workspace (uncached): a cancel stops it; a failure ends the run. */
async function setUpInPlace(
  execution: RunExecution,
  { plan, shared }: { plan: EnvironmentPlan; shared: boolean },
  workspace: Workspace,
): Promise<SetupOutcome | Ended> {
  const { input, run } = execution;
  const started = await environmentSetup.startEnvironmentSetup({
    runId: run.id,
    plan,
    workspacePath: workspace.workspacePath,
    // A continuation or a follow-up round starts from an agent's branch: its setup gets no `setup` secret.
    trusted: shared && !input.parent && !input.followUp,
    ...projectSandbox(input.sandbox),
  });
  if (!started.ok)
    return execution.finish('failed', 'environment_setup_failed', now(), {
      message: `the environment's setup did not start: ${started.message}`,
    });
  let settingUp = true;
  const stopping = condition(() => execution.cancelRequest !== null || !settingUp).then(() =>
    settingUp ? environmentSetup.stopEnvironmentSetup({ runId: run.id }) : undefined,
  );
  const outcome = await environmentWatch.awaitEnvironmentSetup({ runId: run.id, plan });
  settingUp = false;
  await stopping;
  return setupEnded(execution, outcome);
}

/**
 * Waits for the shared build of the run's key, its lines in the run's events. A cancel stops the
 * waiting, not the build: other runs may wait for it too.
 */
async function followBuild(
  execution: RunExecution,
  workflowId: string,
  buildRunId: string,
  key: string,
): Promise<SetupOutcome | Ended> {
  const { run } = execution;
  const outcome = await unlessCancelled(execution, () =>
    environmentWatch.followEnvironmentBuild({ runId: run.id, workflowId, buildRunId, projectId: run.projectId!, key }),
  );
  return isEnded(outcome) ? outcome : setupEnded(execution, outcome);
}

/** `wait`, stopped by a cancel of the run (the activity it runs is cancelled): its answer, or the run's end. */
async function unlessCancelled<T extends object>(execution: RunExecution, wait: () => Promise<T>): Promise<T | Ended> {
  const scope = new CancellationScope();
  let waiting = true;
  const stopping = condition(() => execution.cancelRequest !== null || !waiting).then(() =>
    waiting ? scope.cancel() : undefined,
  );
  try {
    return await scope.run(wait);
  } catch (error) {
    if (isCancellation(error)) return execution.cancelled();
    throw error;
  } finally {
    waiting = false;
    await stopping;
  }
}

/**
 * The run's services, started beside where its agent will run; one refused (a backend without
 * services, an image the operator does not allow) fails the run. The run's end removes them
 * (`removeServices`), however it ended.
 */
async function startServices(execution: RunExecution, services: ServicePlan[]): Promise<Ended | null> {
  const { input, run } = execution;
  execution.services = services;
  const started = await environmentSetup.startEnvironmentServices({
    runId: run.id,
    services,
    ...projectSandbox(input.sandbox),
  });
  if (!started.ok) return execution.finish('failed', started.reason, now(), { message: started.message });
  return null;
}

/**
 * Waits until each service is ready, its bound counted from now at the earliest (a cancel stops
 * the wait); one stopped or not ready within its bound fails the run, with its name and lines.
 */
async function servicesReady(execution: RunExecution, services: ServicePlan[]): Promise<Ended | null> {
  const { run } = execution;
  const since = Date.now();
  const ready = await unlessCancelled(execution, () =>
    environmentWatch.awaitEnvironmentServices({ runId: run.id, services, since }),
  );
  if (isEnded(ready)) return ready;
  if (execution.cancelRequest) return execution.cancelled();
  if (!ready.ok) {
    const { service, message, logs } = ready;
    return execution.finish('failed', 'environment_services_failed', now(), { message, service, logs });
  }
  return null;
}

/** Removes the run's services once it has ended; one the engine kept is left to the reconciler's sweep. */
export async function removeServices(execution: RunExecution): Promise<void> {
  const { run, services } = execution;
  if (!services) return;
  try {
    await environmentSetup.removeEnvironmentServices({ runId: run.id, names: services.map(({ name }) => name) });
  } catch {
    // The sweep removes the containers of ended runs (sandbox/host/sandbox-sweep.ts).
  }
}

/** The run's end when it was cancelled meanwhile or its setup failed; else the setup's outcome. */
async function setupEnded(execution: RunExecution, outcome: SetupOutcome): Promise<SetupOutcome | Ended> {
  if (execution.cancelRequest) return execution.cancelled();
  const { ok, message, exitCode, signal, timedOut } = outcome;
  if (!ok)
    return execution.finish('failed', 'environment_setup_failed', now(), { message, exitCode, signal, timedOut });
  return outcome;
}

/** Start again: the next generation of the run's agent, on its kept workspace, after a raised cap. */
export async function startAgain(execution: RunExecution, workspace: Workspace): Promise<Workspace | Ended> {
  const { input, run, pause } = execution;
  const task = resumePrompt(input.prompt, run.costUsd ?? 0, run.maxCostUsd ?? 0);
  const claimed = await execution.claimInbox();
  execution.phase = 'starting';
  const launched = await sandboxSetup.startAgent({
    ...sandboxOf(execution),
    prompt: foldIntoPrompt(task, claimed),
    workspacePath: workspace.workspacePath,
  });
  const failed = await failedToStart(execution, launched);
  if (failed) return failed;
  // The generation's own events.
  await execution.publish([sandboxStartedEvent(run, launched, workspace.kind, `:g${pause.generation}`, now())]);
  return workspace;
}

/**
 * A failure before the launch is a run that never started: `not_launched` (the cut, or asking the
 * workflow) ends it `never_started`, a worker's full disk `disk_nearly_full`.
 */
async function notLaunchedAsNotStarted<T>(
  activity: () => Promise<T>,
): Promise<T | { notStarted: { reason: RunFailureReason; message: string } }> {
  try {
    return await activity();
  } catch (error) {
    const cause = error instanceof ActivityFailure ? error.cause : null;
    if (!(cause instanceof ApplicationFailure)) throw error;
    if (cause.type === NOT_LAUNCHED) return { notStarted: { reason: 'never_started', message: cause.message } };
    if (cause.type === DISK_NEARLY_FULL) return { notStarted: { reason: DISK_NEARLY_FULL, message: cause.message } };
    throw error;
  }
}

/** The run's end when its sandbox did not start the agent; null when the agent runs. */
async function failedToStart(execution: RunExecution, launched: Launched): Promise<Ended | null> {
  const { run } = execution;
  run.sandboxRunId = launched.sandboxRunId;
  run.costBasis = launched.costBasis;
  const { message } = launched;
  if (launched.status === 'spawn_failed')
    return execution.finish('failed', 'spawn_failed', launched.endedAt ?? now(), { message });
  if (launched.status === 'sandbox_failed')
    return execution.finish('failed', 'sandbox_failed', launched.endedAt ?? now(), { message });
  if (launched.status === 'lost') return execution.finish('failed', 'sandbox_run_lost', now(), { message });
  return null;
}
