import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

// One cron trigger of a project as svc last synced it from `.svc/triggers.yaml`: which Temporal
// Schedule carries it, and its last fire. Rows exist only for triggers in the current file.
export const ProjectTriggerEntity = defineEntity({
  name: 'ProjectTrigger',
  tableName: 'project_triggers',
  properties: {
    projectId: p.string().primary().length(32),
    triggerId: p.string().primary().length(128),
    scheduleId: p.string().length(255),
    cron: p.string().length(128),
    timezone: p.string().length(64).nullable(),
    lastFiredAt: p.datetime().nullable(),
    lastRunId: p.string().length(32).nullable(),
    /** Why Temporal refused the schedule (a cron it cannot parse), when it did. */
    scheduleError: p.text().nullable(),
    syncedAt: p.datetime(),
  },
});

export type ProjectTrigger = InferEntity<typeof ProjectTriggerEntity>;
