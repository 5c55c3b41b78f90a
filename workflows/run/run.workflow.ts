// runWorkflow: one run, from queued to a terminal state. Workflow id = run id. This file is the
// run read top-down: its message handlers, then its phases, accept → prepare → start → supervise
// (→ pause at the cost cap → start again) → finalize → end. A phase that ends the run answers
// `Ended` (workflows/run/execution.ts: finish), the one way a run ends; every transition is
// published to the read model by the workflow, the run's only writer, before the run goes on. The
// workflow closes with the run's terminal state (core/run-workflows.ts); an open PR is followed on
// by workflows/pull-request.workflow.ts.
import {
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  setHandler,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import type { AgentExitEvidence } from '../../core/agent-exit.ts';
import type { RunOutcome, RunWorkflowInput } from '../../core/run-model.ts';
import { FAILURE_BY_PHASE, isTerminalRunState } from '../../core/run-states.ts';
import { CANCELLED_OUTCOME_MEMO, runFailureMessage, RUN_FAILED } from '../../core/run-workflows.ts';
import { runWorkflowControl } from '../activity-proxies.ts';
import { describeFailure } from '../failures.ts';
import {
  admissionDecisionSignal,
  cancelSignal,
  claimInboxUpdate,
  finalizeResultSignal,
  finalizeStateQuery,
  inboxQuery,
  raiseCostCapSignal,
  runSnapshotQuery,
  salvageSignal,
  startGateQuery,
  steerSignal,
} from '../messages.ts';
import { admit } from './admission.ts';
import { now, systemEvent } from './events.ts';
import { isEnded, RunExecution, type Ended } from './execution.ts';
import { finalizeWork } from './finalize.ts';
import { pauseAtCostCap } from './pause.ts';
import { prepareAndStart, removeServices, startAgain, type Workspace } from './start.ts';
import { judge, pausesAtCap, superviseAgent } from './supervise.ts';

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
  const { run } = execution;
  setHandler(runSnapshotQuery, () => run);
  setHandler(cancelSignal, (request) => execution.requestCancel(request));
  setHandler(steerSignal, (message) => execution.receiveSteer(message));
  setHandler(inboxQuery, () => execution.unread());
  setHandler(claimInboxUpdate, () => execution.claimInbox());
  // The start activity's look after a clone (activities/start-activities.ts).
  setHandler(startGateQuery, () => ({
    cancelRequested: execution.cancelRequest !== null,
    unread: execution.unread().length,
  }));
  setHandler(admissionDecisionSignal, (decision) => execution.admissionDecision(decision));
  setHandler(raiseCostCapSignal, ({ maxCostUsd }) => execution.raiseCostCap(maxCostUsd));
  setHandler(finalizeStateQuery, () => ({
    intent: execution.finalize.intent,
    received: execution.finalize.result !== null,
  }));
  setHandler(finalizeResultSignal, ({ attemptId, result }) => execution.finalizeResult(attemptId, result));
  setHandler(salvageSignal, (salvage) => execution.salvaged(salvage));
  // A cancellation asked in Temporal is the run's cancel, with svc's events; the phases run in a
  // scope it does not cut short, so the agent is stopped and the run ends as for any cancel.
  CancellationScope.current().cancelRequested.catch(() => {
    execution.cancelledInTemporal = true;
    return execution.requestCancel({ reason: 'workflow cancellation requested in Temporal', requestedBy: 'temporal' });
  });

  const outcome = await CancellationScope.nonCancellable(async () => {
    await toTheEnd(execution);
    // The run's services go with it, however it ended.
    await removeServices(execution);
    // End: the run's slot given back, its open PR handed over.
    return execution.end();
  });
  return close(execution, outcome);
}

/** The run from queued to its terminal state, whatever fails on the way. */
async function toTheEnd(execution: RunExecution): Promise<Ended> {
  // Whatever fails for good (an activity out of retries, a bug), the run still ends: failed, with
  // the reason closest to where it broke, and an event that says what broke. Its token dies with it.
  try {
    return await phases(execution);
  } catch (error) {
    if (isCancellation(error) || isTerminalRunState(execution.run.state)) throw error;
    const failure = describeFailure(error);
    const { phase } = execution;
    await execution.publish([systemEvent('run:internal_failure', 'run.internal_failure', { phase, ...failure })]);
    return execution.finish('failed', FAILURE_BY_PHASE[phase], now(), { internalFailure: { phase, ...failure } });
  }
}

/** The run's phases, in order; each answers the run's end if it ended there. */
async function phases(execution: RunExecution): Promise<Ended> {
  const accepted = await accept(execution);
  if (accepted) return accepted;
  const workspace = await prepareAndStart(execution);
  if (isEnded(workspace)) return workspace;
  const evidence = await supervise(execution, workspace);
  if (isEnded(evidence)) return evidence;
  return finalize(execution, evidence);
}

/**
 * Accept: the queued run is in the read model; a run dispatched under a concurrency limit then
 * waits for its slot (workflows/run/admission.ts). A cancel ends it where it is.
 */
async function accept(execution: RunExecution): Promise<Ended | null> {
  const { input } = execution;
  await execution.publish([systemEvent('state:queued', 'state_change', { state: 'queued' }, isoOf(input.createdAt))], {
    triggerFire: input.triggerFire,
  });
  if (execution.cancelRequest) return execution.cancelled();
  return admit(execution);
}

/**
 * Supervise: the agent until it exits (workflows/run/supervise.ts). A run that pauses at its cost
 * cap (onCapHit: pause) waits there for a raised cap (workflows/run/pause.ts), then starts its
 * agent again on the same workspace. Answers the evidence of an agent whose work is to be
 * finalized, or the run's end.
 */
async function supervise(execution: RunExecution, workspace: Workspace): Promise<AgentExitEvidence | Ended> {
  let supervised = await superviseAgent(execution);
  while (pausesAtCap(execution, supervised)) {
    const paused = await pauseAtCostCap(execution, supervised.evidence.costCap!);
    if (paused) return paused;
    const restarted = await startAgain(execution, workspace);
    if (isEnded(restarted)) return restarted;
    supervised = await superviseAgent(execution);
  }
  return judge(execution, supervised);
}

/** Finalize: the sandbox hands its work over, svc pushes it and opens the PR (workflows/run/finalize.ts). */
async function finalize(execution: RunExecution, evidence: AgentExitEvidence): Promise<Ended> {
  execution.phase = 'finalizing';
  const finalized = await finalizeWork(execution);
  return execution.finish(finalized.state, finalized.failureReason, now(), {
    exitCode: evidence.exitCode,
    signal: evidence.signal,
    noChanges: finalized.noChanges,
    prUrl: execution.run.prUrl,
  });
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

const isoOf = (ms: number) => new Date(ms).toISOString();
