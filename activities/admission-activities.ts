// The admission queue's I/O (workflows/admission.workflow.ts): a run's request for a slot, sent
// with signal-with-start so the queue exists from the first request on, and the queue's look at
// whether the runs holding slots are still open; and, for the API's admission at the door, how many
// of svc's pods the cluster has not started (the API never talks to the cluster itself).
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { admissionWorkflowId, type AdmissionRequest, type AdmissionWorkflow } from '../core/admission-queue.ts';
import type { SandboxSettings } from '../platform/sandbox-settings.ts';
import { pendingPodCount } from '../sandbox/index.ts';
import { admissionRequestSignal } from '../workflows/messages.ts';

export interface AdmissionActivityDeps {
  temporal: Client;
  taskQueue: string;
  sandbox?: Pick<SandboxSettings, 'mode' | 'kubernetes'>;
}

export function createAdmissionActivities(deps: AdmissionActivityDeps) {
  return {
    /** Asks the admission queue for a slot; the answer comes back as a signal to the run. */
    async requestAdmission(request: AdmissionRequest): Promise<void> {
      await deps.temporal.workflow.signalWithStart<AdmissionWorkflow, [AdmissionRequest]>('admissionWorkflow', {
        workflowId: admissionWorkflowId(deps.taskQueue),
        taskQueue: deps.taskQueue,
        args: [],
        signal: admissionRequestSignal,
        signalArgs: [request],
      });
    },

    /** Of these runs, the ones whose workflow is no longer running (or never existed). */
    async closedRuns({ runIds }: { runIds: string[] }): Promise<string[]> {
      const closed: string[] = [];
      for (const runId of runIds) {
        try {
          const { status } = await deps.temporal.workflow.getHandle(runId).describe();
          if (status.name !== 'RUNNING') closed.push(runId);
        } catch (error) {
          if (error instanceof WorkflowNotFoundError) closed.push(runId);
          else throw error;
        }
      }
      return closed;
    },

    /** svc's pods the cluster has not started; null without the Kubernetes backend or an answer. */
    async countPendingPods(): Promise<number | null> {
      return deps.sandbox?.mode === 'kubernetes' ? await pendingPodCount(deps.sandbox.kubernetes) : null;
    },
  };
}
