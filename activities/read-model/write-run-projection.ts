// One projection of a run: its row (with the lifecycle transitions it crosses), the steering
// messages it carries, its events, and the trigger that fired it. Written by the projectRun local
// activity, and by startAgent for the `running` projection (workflows/run-start.ts).
import type { InboxItem } from '../../core/inbox.ts';
import type { RunSnapshot } from '../../core/run-model.ts';
import { ProjectTriggerEntity } from '../../db/entities/index.ts';
import type { ReadModel } from '../../db/orm.ts';
import { logger } from '../../platform/logger.ts';
import { saveInboxItems } from './inbox-store.ts';
import { observeRunEvents, observeRunProjection } from './run-metrics.ts';
import { appendRunEvents, projectRunRow, type RunEventInput } from './run-projection.ts';

export interface RunProjection {
  snapshot: RunSnapshot;
  events: RunEventInput[];
  triggerFire?: { projectId: string; triggerId: string } | null;
  inbox?: InboxItem[];
}

/** Idempotent: a retry, or an older projection arriving late, changes nothing already written. */
export async function writeRunProjection(
  readModel: ReadModel,
  { snapshot, events, triggerFire, inbox }: RunProjection,
): Promise<void> {
  const before = await projectRunRow(readModel.em(), snapshot);
  if (before !== undefined) observeRunProjection(before, snapshot);
  if (before !== undefined && before?.state !== snapshot.state)
    logger({ component: 'worker' }).info(
      { runId: snapshot.id, workflowId: snapshot.id, state: snapshot.state, failureReason: snapshot.failureReason },
      'run state',
    );
  if (inbox?.length) await saveInboxItems(readModel.em(), snapshot.id, inbox);
  if (events.length && (await appendRunEvents(readModel.em(), snapshot.id, events)) > 0) observeRunEvents(events);
  if (triggerFire) {
    await readModel.em().nativeUpdate(ProjectTriggerEntity, triggerFire, {
      lastFiredAt: new Date(snapshot.createdAt),
      lastRunId: snapshot.id,
    });
  }
}
