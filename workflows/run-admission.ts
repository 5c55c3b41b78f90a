// The admit phase of runWorkflow (workflows/run.workflow.ts): a run under a concurrency limit asks
// the admission queue (workflows/admission.workflow.ts) for a slot and waits, queued, saying why.
import { condition } from '@temporalio/workflow';
import type { RunOutcome } from '../core/run-model.ts';
import { admissionIo } from './activity-proxies.ts';
import { now, type RunExecution } from './run-execution.ts';

/**
 * Admit: a run dispatched under a concurrency limit waits, queued, for a slot from the admission
 * queue (workflows/admission.workflow.ts), saying why it waits; a cancel ends it where it waits.
 */
export async function admit(execution: RunExecution): Promise<{ ended: RunOutcome } | null> {
  const { input, run, admission } = execution;
  if (!input.admission) return null;
  execution.phase = 'admission';
  admission.asked = true;
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
        dedupeKey: `admission:waiting:${(waits += 1)}`,
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
      { dedupeKey: 'admission:granted', kind: 'admission.granted', stream: 'system', ts: now(), payload: {} },
    ]);
  }
  return null;
}
