// Admission, part of a run's accept phase (workflows/run/run.workflow.ts): a run under a concurrency
// limit asks the admission queue (workflows/admission.workflow.ts) for a slot and waits, queued,
// saying why. A run paused at its cost cap gives its slot back and asks again to resume.
import { condition } from '@temporalio/workflow';
import { admissionIo } from '../activity-proxies.ts';
import { systemEvent } from './events.ts';
import type { Ended, RunExecution } from './execution.ts';

/**
 * Admit: a run dispatched under a concurrency limit waits, queued, for a slot from the admission
 * queue, saying why it waits; a cancel ends it where it waits.
 */
export async function admit(execution: RunExecution): Promise<Ended | null> {
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
    if (execution.cancelRequest) return execution.cancelled();
    if (admission.granted) break;
    run.queueReason = admission.reason;
    await execution.publish([
      systemEvent(`admission:waiting:${(waits += 1)}${again}`, 'admission.waiting', { reason: run.queueReason }),
    ]);
  }
  if (run.queueReason) {
    run.queueReason = null;
    await execution.publish([systemEvent(`admission:granted${again}`, 'admission.granted', {})]);
  }
  return null;
}
