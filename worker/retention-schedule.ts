// Each data directory's retention Schedule: a pass every SVC_RETENTION_INTERVAL on the directory's
// own task queue, overlapping passes skipped, and one at once whenever a worker of it starts. The
// schedule's id names the directory; a worker started with other settings brings it up to date.
import { ScheduleAlreadyRunning, type Client, type ScheduleOptions } from '@temporalio/client';

export function retentionScheduleId(taskQueue: string, dataDirKey: string): string {
  return `svc-retention-${taskQueue}-${dataDirKey}`;
}

export async function ensureRetentionSchedule(
  client: Client,
  target: { taskQueue: string; dataDirKey: string; dataDirQueue: string; intervalMs: number },
): Promise<void> {
  const scheduleId = retentionScheduleId(target.taskQueue, target.dataDirKey);
  const options = {
    scheduleId,
    spec: { intervals: [{ every: target.intervalMs }] },
    action: {
      type: 'startWorkflow' as const,
      workflowType: 'retentionWorkflow',
      workflowId: scheduleId,
      // The workflow runs on the shared queue; only its pass goes to the directory's own.
      taskQueue: target.taskQueue,
      args: [{ dataDirQueue: target.dataDirQueue }],
    },
    policies: { overlap: 'SKIP' as const, catchupWindow: '1 minute' },
  } satisfies ScheduleOptions;
  try {
    await client.schedule.create(options);
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
    await client.schedule.getHandle(scheduleId).update((previous) => ({ ...previous, spec: options.spec }));
  }
  await client.schedule.getHandle(scheduleId).trigger();
}
