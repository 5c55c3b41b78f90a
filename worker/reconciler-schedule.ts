// The reconciler's Temporal Schedule (one per task queue): a pass every SVC_RECONCILE_INTERVAL_MS,
// overlapping passes skipped, and one at once whenever a worker starts.
import { ScheduleAlreadyRunning, type Client } from '@temporalio/client';

export function reconcilerScheduleId(taskQueue: string): string {
  return `svc-reconciler-${taskQueue}`;
}

export async function ensureReconcilerSchedule(
  client: Client,
  taskQueue: string,
  timing: { intervalMs: number; staleAfterMs: number },
): Promise<void> {
  const scheduleId = reconcilerScheduleId(taskQueue);
  try {
    await client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: timing.intervalMs }] },
      action: {
        type: 'startWorkflow',
        workflowType: 'reconcileWorkflow',
        workflowId: scheduleId,
        taskQueue,
        args: [{ staleAfterMs: timing.staleAfterMs }],
      },
      policies: { overlap: 'SKIP', catchupWindow: '1 minute' },
    });
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
  }
  await client.schedule.getHandle(scheduleId).trigger();
}
