// The run workflow's own Temporal I/O at its end: a cancelled run's workflow closes Canceled, a
// status only a cancellation request gives, so a run cancelled by svc itself (the API's cancel
// signal, its plan-run, a PR loop that stopped its round, the cost cap) asks Temporal for one.
import type { Client } from '@temporalio/client';
import type { RunOutcome } from '../core/run-model.ts';
import { CANCELLED_OUTCOME_MEMO } from '../core/run-workflows.ts';

export interface RunWorkflowActivityDeps {
  temporal: Client;
}

export function createRunWorkflowActivities(deps: RunWorkflowActivityDeps) {
  return {
    /** Requests the cancellation of the run's workflow (a repeated request changes nothing). */
    async requestRunWorkflowCancel({ runId }: { runId: string }): Promise<void> {
      await deps.temporal.workflow.getHandle(runId).cancel();
    },
    /** The outcome a cancelled run's workflow kept in its memo; null when it has none (not cancelled). */
    async cancelledRunOutcome({ runId }: { runId: string }): Promise<RunOutcome | null> {
      const { memo } = await deps.temporal.workflow.getHandle(runId).describe();
      return (memo?.[CANCELLED_OUTCOME_MEMO] as RunOutcome | undefined) ?? null;
    },
  };
}
