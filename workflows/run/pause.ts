// Pause instead of cancel at the cost cap (core/cost-pause.ts): a run dispatched with
// `onCapHit: pause` whose agent crossed its cap keeps its workspace and waits — durably, for hours
// or days, holding no worker, no sandbox and no concurrency slot — for an operator to raise the cap
// (POST /runs/{id}/resume, the raiseCostCap signal) or to cancel it. A raise starts the agent again
// on the same workspace, as the next generation of the run's sandbox.
import { condition } from '@temporalio/workflow';
import { addUsage, pausedReason } from '../../core/cost-pause.ts';
import { sandboxSetup } from '../activity-proxies.ts';
import { admit } from './admission.ts';
import { releaseAdmission } from './admission-release.ts';
import { systemEvent } from './events.ts';
import type { Ended, RunExecution } from './execution.ts';

type CostCap = { costUsd: number; maxCostUsd: number };

/**
 * Waits at the cap. Answers null once the cap was raised, the old sandbox set aside and a slot
 * granted again (the agent then starts again); the run's end when a cancel came first.
 */
export async function pauseAtCostCap(execution: RunExecution, crossing: CostCap): Promise<Ended | null> {
  const { run, pause } = execution;
  const generation = pause.generation;
  pause.raisedTo = null;
  run.pausedReason = pausedReason(crossing.costUsd, crossing.maxCostUsd);
  execution.phase = 'paused';
  await execution.publish([
    systemEvent(`run:paused:g${generation}`, 'run.paused', {
      reason: 'cost_cap',
      ...crossing,
      generation,
      workspacePath: run.workspacePath,
    }),
  ]);
  await releaseAdmission(execution);
  await condition(() => execution.cancelRequest !== null || pause.raisedTo !== null);
  run.pausedReason = null;
  if (execution.cancelRequest) return execution.cancelled();

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
    systemEvent(`run:resumed:g${pause.generation}`, 'run.resumed', {
      maxCostUsd,
      spentUsd: run.costUsd,
      generation: pause.generation,
    }),
  ]);
  await sandboxSetup.setSandboxAside({ runId: run.id, generation });
  const admitted = await admit(execution);
  if (admitted) return admitted;
  // A cancel that came while the old sandbox was set aside.
  return execution.cancelRequest ? execution.cancelled() : null;
}
