// The supervise phase of runWorkflow (workflows/run/run.workflow.ts): one generation of the agent
// followed until it exits, under its watchdogs, then judged: how its exit ends the run, or whether
// its work goes on to be finalized.
import { condition } from '@temporalio/workflow';
import { classifyAgentExit, type AgentExitEvidence } from '../../core/agent-exit.ts';
import { addUsage } from '../../core/cost-pause.ts';
import { sandboxSetup, supervision } from '../activity-proxies.ts';
import { now, systemEvent } from './events.ts';
import type { Ended, RunExecution } from './execution.ts';
import { startWatchdogs, type TimedOut } from './watchdogs.ts';

export type Supervised = {
  evidence: Awaited<ReturnType<typeof supervision.superviseAgent>>;
  timedOut: TimedOut;
  /** The duration limit the watchdogs applied (ms; null: none). */
  limitMs: number | null;
};

/**
 * Until the agent exits. A cancel or a watchdog stops the agent through its own activity; the
 * supervising activity then sees the agent exit like any other, so every output line is still
 * recorded. (Cancelling the supervising activity instead would not wait: Temporal records a
 * retrying activity as started only when it ends, so the SDK would resolve its cancellation at once.)
 */
export async function superviseAgent(execution: RunExecution): Promise<Supervised> {
  const { input, run } = execution;
  let supervising = true;
  let timedOut: TimedOut = null;
  const watchdogs = startWatchdogs(execution, {
    running: () => supervising,
    timedOut: () => timedOut,
    fire: (reason) => void (timedOut ??= reason),
  });
  const stopping = condition(() => execution.cancelRequest !== null || timedOut !== null || !supervising).then(() =>
    supervising ? sandboxSetup.stopAgent({ runId: run.id }) : undefined,
  );
  execution.phase = 'supervising';
  const { generation, usageBefore } = execution.pause;
  const evidence = await supervision.superviseAgent({
    runId: run.id,
    runtime: input.agent.runtime,
    maxCostUsd: run.maxCostUsd,
    workspacePath: run.workspacePath,
    // A resumed run's agent: its own output keys, and its cap counts what the run spent before.
    ...(generation > 1 ? { generation, spentUsd: usageBefore?.costUsd ?? 0 } : {}),
  });
  if (evidence.usage) Object.assign(run, addUsage(usageBefore, evidence.usage));
  // The model the agent said it ran outweighs the one asked for (none, an alias, a provider's default).
  if (evidence.model) run.model = evidence.model;
  supervising = false;
  await Promise.all([stopping, watchdogs.done]);
  return { evidence, timedOut, limitMs: watchdogs.limitMs };
}

/**
 * Whether the run pauses at its cap instead of ending cancelled: asked for (onCapHit: pause), not
 * cancelled, and the sandbox ended cleanly with its workspace here (a lost pod's is not).
 */
export function pausesAtCap(execution: RunExecution, { evidence }: Supervised): boolean {
  const clean = !evidence.lost && !evidence.unreachable && !evidence.evicted && !evidence.notHandedBack;
  return Boolean(evidence.costCap) && execution.input.onCapHit === 'pause' && !execution.cancelRequest && clean;
}

/** How the agent's exit ends the run; or its evidence, when its work goes on to be finalized. */
export async function judge(
  execution: RunExecution,
  { evidence, timedOut, limitMs }: Supervised,
): Promise<AgentExitEvidence | Ended> {
  const { input, run, timing } = execution;
  if (execution.cancelRequest) return execution.cancelled();
  const endedAt = () => evidence.endedAt ?? now();
  const exit = { exitCode: evidence.exitCode, signal: evidence.signal };
  // Crossing the spend cap cancels the run (the reference's rule), keeping what the agent reported.
  if (evidence.costCap)
    return execution.finish('cancelled', null, endedAt(), { reason: 'cost_cap_exceeded', ...evidence.costCap });
  // A workspace past SVC_RUN_WORKSPACE_MAX_MIB: its agent was stopped as at the cap, and the run fails.
  if (evidence.workspaceTooLarge)
    return execution.finish('failed', 'workspace_too_large', endedAt(), { ...exit, ...evidence.workspaceTooLarge });
  if (timedOut) {
    await execution.publish([
      timedOut === 'duration'
        ? systemEvent('watchdog:duration', 'duration.exceeded', {
            maxDurationMinutes: input.agent.maxDurationMinutes,
            limitMinutes: limitMs! / 60_000,
          })
        : systemEvent('watchdog:silence', 'watchdog.silence_exceeded', { silenceTimeoutMs: timing.silenceTimeoutMs }),
    ]);
    return execution.finish('failed', 'timed_out', endedAt(), exit);
  }
  const verdict = classifyAgentExit(evidence);
  // A pod's service that never got ready: its name, why and its lines, as when the workflow waited.
  const detail = verdict.failureReason === 'environment_services_failed' ? evidence.serviceFailure : null;
  if (verdict.state !== 'succeeded' || !run.projectId || !run.branch || !input.baseBranch)
    return execution.finish(verdict.state, verdict.failureReason, endedAt(), { ...exit, ...detail });
  return evidence;
}
