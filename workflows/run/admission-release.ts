// Giving a run's admission slot back (workflows/admission.workflow.ts): at the run's end, or while it
// is paused at its cost cap. Apart from admission.ts, which needs the run's execution, so that the
// execution can call it without an import cycle.
import { CancellationScope, getExternalWorkflowHandle, workflowInfo } from '@temporalio/workflow';
import { admissionWorkflowId } from '../../core/admission-queue.ts';
import { admissionReleaseSignal } from '../messages.ts';

/** Gives the run's slot (or its place in the queue) back: at its end, or while it is paused. */
export async function releaseAdmission(execution: {
  admission: { asked: boolean };
  run: { id: string };
}): Promise<void> {
  if (!execution.admission.asked) return;
  execution.admission.asked = false;
  await CancellationScope.nonCancellable(() =>
    getExternalWorkflowHandle(admissionWorkflowId(workflowInfo().taskQueue))
      .signal(admissionReleaseSignal, { runId: execution.run.id })
      .catch(() => undefined),
  );
}
