// Where a run's time goes, from its workflow history (the server's own timestamps): each activity
// from scheduled to completed, each workflow task from scheduled to completed (queue wait plus the
// worker's work, local activities included), and what the run costs Temporal: history events, and
// the actions a managed Temporal bills (started, activities, timers, signals, updates, markers,
// search-attribute upserts, child workflows; heartbeats are billed too but leave no event).
import type { Client } from '@temporalio/client';

export interface RunBreakdown {
  runs: number;
  totalMs: number;
  workflowTasks: number;
  workflowTaskMs: number;
  events: number;
  actions: number;
  /** Per activity type: mean ms from scheduled to completed, per run. */
  activities: Record<string, number>;
}

const ms = (time: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
  Number(time?.seconds ?? 0) * 1000 + (time?.nanos ?? 0) / 1e6;

/** The events whose attributes mark a billed action. */
const BILLED = [
  'workflowExecutionStartedEventAttributes',
  'activityTaskScheduledEventAttributes',
  'timerStartedEventAttributes',
  'workflowExecutionSignaledEventAttributes',
  'workflowExecutionUpdateAcceptedEventAttributes',
  'markerRecordedEventAttributes',
  'upsertWorkflowSearchAttributesEventAttributes',
  'startChildWorkflowExecutionInitiatedEventAttributes',
] as const;

/** The mean breakdown of these runs' histories (each must have completed). */
export async function breakdownOf(client: Client, runIds: string[]): Promise<RunBreakdown> {
  const sum: RunBreakdown = {
    runs: runIds.length,
    totalMs: 0,
    workflowTasks: 0,
    workflowTaskMs: 0,
    events: 0,
    actions: 0,
    activities: {},
  };
  for (const runId of runIds) {
    const events = (await client.workflow.getHandle(runId).fetchHistory()).events ?? [];
    const at = new Map<number, { time: number; name?: string }>();
    for (const event of events) {
      const id = Number(event.eventId);
      const time = ms(event.eventTime);
      const name = event.activityTaskScheduledEventAttributes?.activityType?.name ?? undefined;
      at.set(id, { time, ...(name ? { name } : {}) });
      sum.events += 1;
      if (BILLED.some((attributes) => event[attributes])) sum.actions += 1;
      const completedTask = event.workflowTaskCompletedEventAttributes;
      if (completedTask) {
        sum.workflowTasks += 1;
        sum.workflowTaskMs += time - at.get(Number(completedTask.scheduledEventId))!.time;
      }
      const completedActivity = event.activityTaskCompletedEventAttributes;
      if (completedActivity) {
        const scheduled = at.get(Number(completedActivity.scheduledEventId))!;
        sum.activities[scheduled.name!] = (sum.activities[scheduled.name!] ?? 0) + time - scheduled.time;
      }
    }
    sum.totalMs += ms(events.at(-1)?.eventTime) - ms(events[0]?.eventTime);
  }
  const mean = (value: number) => Number((value / runIds.length).toFixed(1));
  return {
    runs: runIds.length,
    totalMs: mean(sum.totalMs),
    workflowTasks: mean(sum.workflowTasks),
    workflowTaskMs: mean(sum.workflowTaskMs),
    events: mean(sum.events),
    actions: mean(sum.actions),
    activities: Object.fromEntries(Object.entries(sum.activities).map(([name, total]) => [name, mean(total)])),
  };
}
