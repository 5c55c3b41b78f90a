// The run workflow's own Temporal I/O at its end: a cancelled run's workflow closes Canceled, a
// status only a cancellation request gives, so a run cancelled by svc itself (the API's cancel
// signal, its plan-run, a PR loop that stopped its round, the cost cap) asks Temporal for one.
import type { Client } from '@temporalio/client';

export interface RunWorkflowActivityDeps {
  temporal: Client;
}

export function createRunWorkflowActivities(deps: RunWorkflowActivityDeps) {
  return {
    /** Requests the cancellation of the run's workflow (a repeated request changes nothing). */
    async requestRunWorkflowCancel({ runId }: { runId: string }): Promise<void> {
      await deps.temporal.workflow.getHandle(runId).cancel();
    },
  };
}
