// runWorkflow: one run, from queued to a terminal state. Workflow id = run id. The workflow holds
// the run (workflows/run-execution.ts: its state and message handlers); this file is the sequence
// of phases, read top-down: accept → admit → prepare → start → supervise (→ pause at the cost cap →
// start again) → judge → finalize → finish → close. The workflow closes with the run's terminal
// state (core/run-workflows.ts); an open PR is followed on by workflows/pull-request.workflow.ts.
// Every transition is published to the read model by an activity before the run goes on.
import {
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import { classifyAgentExit, type AgentExitEvidence } from '../core/agent-exit.ts';
import type { RunOutcome, RunWorkflowInput } from '../core/run-model.ts';
import { FAILURE_BY_PHASE, isTerminalRunState } from '../core/run-states.ts';
import { CANCELLED_OUTCOME_MEMO, runFailureMessage, RUN_FAILED } from '../core/run-workflows.ts';
import { runWorkflowControl, sandboxSetup, supervision } from './activity-proxies.ts';
import { admit } from './run-admission.ts';
import { describeFailure } from './failures.ts';
import { now, RunExecution } from './run-execution.ts';
import { pauseAtCostCap } from './run-pause.ts';
import { startAgent } from './run-start.ts';
import { addUsage } from '../core/cost-pause.ts';
import { finalizeWork } from './run-tail.ts';
import { startWatchdogs, type TimedOut } from './run-watchdogs.ts';

/** A phase that ended the run answers this instead of going on. */
type Ended = { ended: RunOutcome };
const ended = (outcome: RunOutcome): Ended => ({ ended: outcome });
const isEnded = (value: unknown): value is Ended => typeof value === 'object' && value !== null && 'ended' in value;

/**
 * One run, from dispatch to its terminal state (workflow id = run id): cut the workspace, start the
 * agent in its sandbox, supervise it (steering, cancel, watchdogs), finalize its work (push, PR,
 * change summary), hand its open PR over to the workflow that follows it, and close as the run
 * ended: Completed, Failed or Canceled. The run's state lives here; every projection to the read
 * model and every I/O is an activity. Whatever fails inside, the run still ends in a terminal
 * state (docs/runs.md, docs/reliability.md).
 */
export async function runWorkflow(input: RunWorkflowInput): Promise<RunOutcome> {
  const execution = new RunExecution(input);
  // A cancellation asked in Temporal does not cut the phases short: RunExecution turns it into the
  // run's cancel, which stops the agent and ends the run like POST /runs/{id}/cancel.
  const outcome = await CancellationScope.nonCancellable(() => toTheEnd(execution));
  return close(execution, outcome);
}

/**
 * The workflow's close, as the run ended: succeeded → Completed with the outcome; failed → Failed,
 * a non-retryable failure whose message names the reason and whose details hold the outcome;
 * cancelled → Canceled, which only a cancellation request gives: one svc asks for itself when the
 * cancel came from svc (the API's signal, a plan-run, the PR loop, the cost cap).
 */
async function close(execution: RunExecution, outcome: RunOutcome): Promise<RunOutcome> {
  if (outcome.state === 'failed')
    throw ApplicationFailure.create({
      type: RUN_FAILED,
      message: runFailureMessage(outcome),
      nonRetryable: true,
      details: [outcome],
    });
  if (outcome.state !== 'cancelled') return outcome;
  // A cancellation carries no result: the memo keeps the outcome (its cost) for whoever reads it later.
  upsertMemo({ [CANCELLED_OUTCOME_MEMO]: outcome });
  if (!execution.cancelledInTemporal)
    await CancellationScope.nonCancellable(() =>
      runWorkflowControl.requestRunWorkflowCancel({ runId: workflowInfo().workflowId }),
    );
  // Rejects with the cancellation, which closes the workflow Canceled.
  await CancellationScope.current().cancelRequested;
  return outcome;
}

/** The run from queued to its terminal state, whatever fails on the way. */
async function toTheEnd(execution: RunExecution): Promise<RunOutcome> {
  // Whatever fails for good (an activity out of retries, a bug), the run still ends: failed, with
  // the reason closest to where it broke, and an event that says what broke. Its token dies with it.
  try {
    return await phases(execution);
  } catch (error) {
    if (isCancellation(error) || isTerminalRunState(execution.run.state)) throw error;
    const failure = describeFailure(error);
    const { phase } = execution;
    await execution.publish([
      {
        dedupeKey: 'run:internal_failure',
        kind: 'run.internal_failure',
        stream: 'system',
        ts: now(),
        payload: { phase, ...failure },
      },
    ]);
    return execution.finish('failed', FAILURE_BY_PHASE[phase], now(), { internalFailure: { phase, ...failure } });
  }
}

/** The run from queued to its end, phase by phase. */
async function phases(execution: RunExecution): Promise<RunOutcome> {
  const accepted = await accept(execution);
  if (isEnded(accepted)) return accepted.ended;
  const admitted = await admit(execution);
  if (isEnded(admitted)) return admitted.ended;
  const started = await prepareAndStart(execution);
  if (isEnded(started)) return started.ended;
  const { workspace } = started;
  let supervised = await supervise(execution);
  // onCapHit: pause — the run waits at its cap; a raised cap starts the agent again (run-pause.ts).
  while (pausesAtCap(execution, supervised)) {
    const paused = await pauseAtCostCap(execution, supervised.evidence.costCap!);
    if (isEnded(paused)) return paused.ended;
    if (paused === 'cancelled' || execution.cancelRequest) break;
    const restarted = await startAgent(execution, workspace);
    if (isEnded(restarted)) return restarted.ended;
    supervised = await supervise(execution);
  }
  const judged = await judge(execution, supervised);
  if (isEnded(judged)) return judged.ended;
  return finalize(execution, judged);
}

/**
 * Whether the run pauses at its cap instead of ending cancelled: asked for (onCapHit: pause), not
 * cancelled, and the sandbox ended cleanly with its workspace here (a lost pod's is not).
 */
function pausesAtCap(execution: RunExecution, { evidence }: Supervised): boolean {
  const clean = !evidence.lost && !evidence.unreachable && !evidence.evicted && !evidence.notHandedBack;
  return Boolean(evidence.costCap) && execution.input.onCapHit === 'pause' && !execution.cancelRequest && clean;
}

/** Accept: the queued run is in the read model. */
async function accept(execution: RunExecution): Promise<Ended | null> {
  const { input } = execution;
  await execution.publish(
    [
      {
        dedupeKey: 'state:queued',
        kind: 'state_change',
        stream: 'system',
        ts: new Date(input.createdAt).toISOString(),
        payload: { state: 'queued' },
      },
    ],
    { triggerFire: input.triggerFire },
  );
  return execution.cancelRequest ? ended(await execution.cancelled()) : null;
}

/**
 * Prepare, then start: one activity cuts the run's workspace (from the project, or empty) and
 * starts its agent in its sandbox (workflows/run-start.ts).
 */
function prepareAndStart(execution: RunExecution) {
  return startAgent(execution, null);
}

type Supervised = {
  evidence: Awaited<ReturnType<typeof supervision.superviseAgent>>;
  timedOut: TimedOut;
  /** The duration limit the watchdogs applied (ms; null: none). */
  limitMs: number | null;
};

/**
 * Supervise: until the agent exits. A cancel or a watchdog stops the agent through its own
 * activity; the supervising activity then sees the agent exit like any other, so every output line
 * is still recorded. (Cancelling the supervising activity instead would not wait: Temporal records
 * a retrying activity as started only when it ends, so the SDK would resolve its cancellation at once.)
 */
async function supervise(execution: RunExecution): Promise<Supervised> {
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

/** Judge: how the agent's exit ends the run, or whether its work goes on to be finalized. */
async function judge(
  execution: RunExecution,
  { evidence, timedOut, limitMs }: Supervised,
): Promise<AgentExitEvidence | Ended> {
  const { input, run, timing } = execution;
  if (execution.cancelRequest) return ended(await execution.cancelled());
  // Crossing the spend cap cancels the run (the reference's rule), keeping what the agent reported.
  if (evidence.costCap)
    return ended(
      await execution.finish('cancelled', null, evidence.endedAt ?? now(), {
        reason: 'cost_cap_exceeded',
        ...evidence.costCap,
      }),
    );
  if (timedOut) {
    await execution.publish([
      timedOut === 'duration'
        ? {
            dedupeKey: 'watchdog:duration',
            kind: 'duration.exceeded',
            stream: 'system',
            ts: now(),
            payload: {
              maxDurationMinutes: input.agent.maxDurationMinutes,
              limitMinutes: limitMs! / 60_000,
            },
          }
        : {
            dedupeKey: 'watchdog:silence',
            kind: 'watchdog.silence_exceeded',
            stream: 'system',
            ts: now(),
            payload: { silenceTimeoutMs: timing.silenceTimeoutMs },
          },
    ]);
    return ended(
      await execution.finish('failed', 'timed_out', evidence.endedAt ?? now(), {
        exitCode: evidence.exitCode,
        signal: evidence.signal,
      }),
    );
  }
  const verdict = classifyAgentExit(evidence);
  if (verdict.state !== 'succeeded' || !run.projectId || !run.branch || !input.baseBranch) {
    return ended(
      await execution.finish(verdict.state, verdict.failureReason, evidence.endedAt ?? now(), {
        exitCode: evidence.exitCode,
        signal: evidence.signal,
      }),
    );
  }
  return evidence;
}

/** Finalize: the sandbox hands its work over, svc pushes it and opens the PR; then the run ends. */
async function finalize(execution: RunExecution, evidence: AgentExitEvidence): Promise<RunOutcome> {
  const { input, run, timing } = execution;
  execution.phase = 'finalizing';
  const finalized = await finalizeWork(run, {
    baseBranch: input.baseBranch!,
    timing,
    channel: execution.finalize,
    publish: (events) => execution.publish(events),
  });
  return execution.finish(finalized.state, finalized.failureReason, now(), {
    exitCode: evidence.exitCode,
    signal: evidence.signal,
    noChanges: finalized.noChanges,
    prUrl: run.prUrl,
  });
}
