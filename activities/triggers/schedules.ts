// Keeps one Temporal Schedule per cron trigger in step with `.svc/triggers.yaml`: create new ones,
// update changed ones, delete those that left the file. Temporal does the timing; svc only
// describes what should fire.
import { ScheduleAlreadyRunning, ScheduleNotFoundError, type Client, type ScheduleOptions } from '@temporalio/client';
import type { EntityManager } from '@mikro-orm/sql';
import { SvcKind, SvcProjectId } from '../../core/search-attributes.ts';
import type { Trigger } from '../../core/svc-config.ts';
import { ProjectTriggerEntity } from '../../db/entities/index.ts';

export interface TriggerScheduleSync {
  synced: string[];
  removed: string[];
  errors: { triggerId: string; message: string }[];
}

export function triggerScheduleId(projectId: string, triggerId: string): string {
  return `svc-trigger-${projectId}-${triggerId}`;
}

function scheduleOptions(projectId: string, trigger: Trigger, taskQueue: string): ScheduleOptions {
  const scheduleId = triggerScheduleId(projectId, trigger.id);
  return {
    scheduleId,
    spec: { cronExpressions: [trigger.cron], timezone: trigger.timezone ?? 'UTC' },
    action: {
      type: 'startWorkflow',
      workflowType: 'triggerFireWorkflow',
      workflowId: scheduleId,
      taskQueue,
      args: [{ projectId, triggerId: trigger.id }],
      typedSearchAttributes: [
        { key: SvcKind, value: 'trigger' },
        { key: SvcProjectId, value: projectId },
      ],
    },
    // A trigger whose previous fire is still dispatching does not pile up.
    policies: { overlap: 'SKIP', catchupWindow: '1 minute' },
    memo: { projectId, triggerId: trigger.id },
  };
}

export async function syncTriggerSchedules(args: {
  em: EntityManager;
  client: Client;
  taskQueue: string;
  projectId: string;
  triggers: Trigger[];
}): Promise<TriggerScheduleSync> {
  const { em, client, projectId, triggers } = args;
  const result: TriggerScheduleSync = { synced: [], removed: [], errors: [] };
  const existing = await em.find(ProjectTriggerEntity, { projectId });

  for (const trigger of triggers) {
    const options = scheduleOptions(projectId, trigger, args.taskQueue);
    let scheduleError: string | null = null;
    try {
      try {
        await client.schedule.create(options);
      } catch (error) {
        if (!(error instanceof ScheduleAlreadyRunning)) throw error;
        await client.schedule.getHandle(options.scheduleId).update((previous) => ({
          ...previous,
          spec: options.spec,
          action: options.action,
          policies: { ...previous.policies, ...options.policies },
        }));
      }
      result.synced.push(trigger.id);
    } catch (error) {
      scheduleError = (error as Error).message;
      result.errors.push({ triggerId: trigger.id, message: scheduleError });
    }
    const row = existing.find((candidate) => candidate.triggerId === trigger.id);
    const data = {
      scheduleId: options.scheduleId,
      cron: trigger.cron,
      timezone: trigger.timezone ?? null,
      scheduleError,
      syncedAt: new Date(),
    };
    if (row) em.assign(row, data);
    else
      em.create(ProjectTriggerEntity, {
        projectId,
        triggerId: trigger.id,
        lastFiredAt: null,
        lastRunId: null,
        ...data,
      });
  }

  for (const row of existing.filter((candidate) => !triggers.some((trigger) => trigger.id === candidate.triggerId))) {
    try {
      await client.schedule.getHandle(row.scheduleId).delete();
    } catch (error) {
      if (!(error instanceof ScheduleNotFoundError)) throw error;
    }
    em.remove(row);
    result.removed.push(row.triggerId);
  }
  await em.flush();
  return result;
}
