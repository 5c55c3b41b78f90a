// How a run's workflows look from Temporal (docs/guide/temporal-ui.md): the run workflow closes
// with its terminal state (succeeded: Completed, failed: Failed with the outcome in the failure's
// details, cancelled: Canceled); a PR still open is followed by a workflow of its own.
import type { RunOutcome, RunSnapshot, RunWorkflowInput } from './run-model.ts';

/** The workflow that follows a run's PR once the run has ended (docs/pr-loop.md). */
export const pullRequestWorkflowId = (runId: string) => `${runId}-pr`;

/** What the PR workflow starts from: the run as it ended, its input, and a stop that came meanwhile. */
export interface PullRequestWorkflowInput {
  /** The run at its end; its projectionVersion is the last one the run workflow wrote. */
  run: RunSnapshot;
  input: RunWorkflowInput;
  /** What the run last told its plan-run (`state/prState`), so the news is not told twice. */
  toldPlan: string;
  /** A cancel of the ended run: the PR is followed, no longer answered. */
  prLoopStop: { reason: string | null; requestedBy: string } | null;
}

/** The failure type of a run workflow that closed Failed; its details hold the RunOutcome. */
export const RUN_FAILED = 'run_failed';

/**
 * The memo key under which a cancelled run's workflow keeps its RunOutcome: Canceled closes carry no
 * result, and the PR loop still counts a stopped round's cost toward its PR's total.
 */
export const CANCELLED_OUTCOME_MEMO = 'cancelledOutcome';

/** The message a failed run's workflow closes with: the reason first, so the Temporal UI shows it. */
export function runFailureMessage(outcome: RunOutcome): string {
  return `run failed: ${outcome.failureReason ?? 'unknown'}`;
}

interface FailureLike {
  name?: string;
  type?: string | null;
  details?: unknown[];
  cause?: unknown;
}

/**
 * The outcome a run workflow closed with, read from its failure (a client's or a parent's): the
 * details of a `run_failed` failure, or `cancelled` (a cancellation carries no result). Null when
 * the workflow closed otherwise (terminated, timed out, a bug).
 */
export function outcomeOfClosedRun(runId: string, error: unknown): RunOutcome | null {
  for (let current = error as FailureLike | undefined; current; current = current.cause as FailureLike | undefined) {
    if (current.type === RUN_FAILED && current.details?.[0]) return current.details[0] as RunOutcome;
    if (current.name === 'CancelledFailure')
      return { runId, state: 'cancelled', failureReason: null, prUrl: null, prState: null, costUsd: null };
  }
  return null;
}
