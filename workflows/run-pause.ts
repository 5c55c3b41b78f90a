// Pause instead of cancel at the cost cap (core/cost-pause.ts): a run dispatched with
// `onCapHit: pause` whose agent crossed its cap keeps its workspace and waits — durably, for hours
// or days, holding no worker, no sandbox and no concurrency slot — for an operator to raise the cap
// (POST /runs/{id}/resume, the raiseCostCap signal) or to cancel it. A raise starts the agent again
// on the same workspace, as the next generation of the run's sandbox.
import { condition } from '@temporalio/workflow';
import { addUsage, pausedReason } from '../core/cost-pause.ts';
import type { RunOutcome } from '../core/run-model.ts';
import { sandboxSetup } from './activity-proxies.ts';
import { admit, releaseAdmission } from './run-admission.ts';
import { now, type RunExecution } from './run-execution.ts';

type CostCap = { costUsd: number; maxCostUsd: number };

/**
 * Waits at the cap. Answers `resumed` once the cap was raised, the old sandbox set aside and a slot
 * granted again; `cancelled` when a cancel came first (the judge then ends the run cancelled);
 * or the run's end, when it was cancelled while it waited for its slot again.
 */
export async function pauseAtCostCap(
  execution: RunExecution,
  crossing: CostCap,
): Promise<'resumed' | 'cancelled' | { ended: RunOutcome }> {
  const { run, pause } = execution;
  const generation = pause.generation;
  pause.raisedTo = null;
  run.pausedReason = pausedReason(crossing.costUsd, crossing.maxCostUsd);
  execution.phase = 'paused';
  await execution.publish([
    {
      dedupeKey: `run:paused:g${generation}`,
      kind: 'run.paused',
      stream: 'system',
      ts: now(),
      payload: { reason: 'cost_cap', ...crossing, generation, workspacePath: run.workspacePath },
    },
  ]);
  await releaseAdmission(execution);
  await condition(() => execution.cancelRequest !== null || pause.raisedTo !== null);
  run.pausedReason = null;
  if (execution.cancelRequest) return 'cancelled';

  const maxCostUsd = pause.raisedTo!;
  run.maxCostUsd = maxCostUsd;
  pause.usageBefore = addUsage(null, {
    costUsd: run.costUsd,
    tokensInput: run.tokensInput,
    tokensOutput: run.tokensOutput,
    tokensCacheRead: run.tokensCacheRead,
    tokensCacheWrite: run.tokensCacheWrite,
  });
  pause.generation = generation + 1;
  // Said at once (the read model drops pausedReason), before the slower setting aside.
  await execution.publish([
    {
      dedupeKey: `run:resumed:g${pause.generation}`,
      kind: 'run.resumed',
      stream: 'system',
      ts: now(),
      payload: { maxCostUsd, spentUsd: run.costUsd, generation: pause.generation },
    },
  ]);
  await sandboxSetup.setSandboxAside({ runId: run.id, generation });
  const admitted = await admit(execution);
  return admitted ?? 'resumed';
}
