// The admit phase of runWorkflow (workflows/run.workflow.ts): a run under a concurrency limit asks
// the admission queue (workflows/admission.workflow.ts) for a slot and waits, queued, saying why.
import { condition, getExternalWorkflowHandle, workflowInfo } from '@temporalio/workflow';
import { admissionWorkflowId } from '../core/admission-queue.ts';
import type { RunOutcome } from '../core/run-model.ts';
import { admissionIo } from './activity-proxies.ts';
import { admissionReleaseSignal } from './messages.ts';
import { now, type RunExecution } from './run-execution.ts';

/**
 * Admit: a run dispatched under a concurrency limit waits, queued, for a slot from the admission
 * queue (workflows/admission.workflow.ts), saying why it waits; a cancel ends it where it waits.
 */
export async function admit(execution: RunExecution): Promise<{ ended: RunOutcome } | null> {
  const { input, run, admission } = execution;
  if (!input.admission) return null;
  // A run resumed after a pause asks again: its events are that generation's.
  const again = execution.pause.generation > 1 ? `:g${execution.pause.generation}` : '';
  execution.phase = 'admission';
  admission.asked = true;
  admission.granted = false;
  admission.reason = null;
  await admissionIo.requestAdmission({
    runId: run.id,
    projectId: run.projectId,
    dispatchedAt: input.createdAt,
    ...input.admission,
  });
  let waits = 0;
  for (;;) {
    await condition(
      () => admission.granted || execution.cancelRequest !== null || admission.reason !== run.queueReason,
    );
    if (execution.cancelRequest) return { ended: await execution.cancelled() };
    if (admission.granted) break;
    run.queueReason = admission.reason;
    await execution.publish([
      {
        dedupeKey: `admission:waiting:${(waits += 1)}${again}`,
        kind: 'admission.waiting',
        stream: 'system',
        ts: now(),
        payload: { reason: run.queueReason },
      },
    ]);
  }
  if (run.queueReason) {
    run.queueReason = null;
    await execution.publish([
      { dedupeKey: `admission:granted${again}`, kind: 'admission.granted', stream: 'system', ts: now(), payload: {} },
    ]);
  }
  return null;
}

/** Gives the run's slot (or its place in the queue) back: at its end, or while it is paused. */
export async function releaseAdmission(execution: RunExecution): Promise<void> {
  if (!execution.admission.asked) return;
  execution.admission.asked = false;
  await getExternalWorkflowHandle(admissionWorkflowId(workflowInfo().taskQueue))
    .signal(admissionReleaseSignal, { runId: execution.run.id })
    .catch(() => undefined);
}
