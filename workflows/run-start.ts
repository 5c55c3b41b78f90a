// The start phase of runWorkflow (workflows/run.workflow.ts): the agent in its sandbox, with the
// prompt and the steering messages that arrived while it was queued. A run resumed after a pause at
// its cost cap (workflows/run-pause.ts) starts its next generation here too, on the same workspace.
import { upsertSearchAttributes } from '@temporalio/workflow';
import { resumePrompt } from '../core/cost-pause.ts';
import { foldIntoPrompt } from '../core/inbox.ts';
import type { RunOutcome } from '../core/run-model.ts';
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
    await execution.publish([sandboxStarted(execution, launched, workspace, again, now())]);
    return null;
  }
  run.state = 'running';
  run.startedAt = launched.spawnedAt ?? now();
  upsertSearchAttributes([{ key: SvcState, value: 'running' }]);
  await execution.publish([
    sandboxStarted(execution, launched, workspace, '', run.startedAt),
    {
      dedupeKey: 'state:running',
      kind: 'state_change',
      stream: 'system',
      ts: run.startedAt,
      payload: { state: 'running' },
    },
  ]);
  return null;
}

/** The sandbox.started event: what the agent runs in, and where. */
function sandboxStarted(
  execution: RunExecution,
  launched: Awaited<ReturnType<typeof sandboxSetup.startAgent>>,
  workspace: Workspace,
  again: string,
  ts: string,
) {
  const { run } = execution;
  return {
    dedupeKey: `sandbox:started${again}`,
    kind: 'sandbox.started' as const,
    stream: 'system' as const,
    ts,
    payload: {
      ...(launched.sandbox ?? {}),
      sandboxId: run.sandboxId,
      sandboxRunId: run.sandboxRunId,
      workspacePath: run.workspacePath,
      isolation: launched.isolation,
      memory: launched.memory ?? null,
      workspace: workspace.kind,
    },
  };
}
