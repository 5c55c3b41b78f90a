// One projection of a run: its row (with the lifecycle transitions it crosses), the steering
// messages it carries, its events, and the trigger that fired it. Written by the projectRun local
// activity, which the run's workflow, the run's only writer, asks for every transition.
import type { InboxItem } from '../../core/inbox.ts';
import type { RunSnapshot } from '../../core/run-model.ts';
import { ProjectTriggerEntity } from '../../db/entities/index.ts';
import type { ReadModel } from '../../db/orm.ts';
import { logger } from '../../platform/logger.ts';
import { writeInboxItems } from './inbox-store.ts';
import { observeRunEvents, observeRunProjection } from './run-metrics.ts';
import { insertRunEvents, writeRunRow, type RunEventInput } from './run-projection.ts';

export interface RunProjection {
  snapshot: RunSnapshot;
  events: RunEventInput[];
  triggerFire?: { projectId: string; triggerId: string } | null;
  inbox?: InboxItem[];
}

/**
 * Idempotent: a retry, or an older projection arriving late, changes nothing already written. One
 * transaction: the row, its inbox, its events and its trigger are seen together or not at all.
 */
export async function writeRunProjection(
  readModel: ReadModel,
  { snapshot, events, triggerFire, inbox }: RunProjection,
): Promise<void> {
  const { before, appended } = await readModel.em().transactional(async (tx) => {
    const before = await writeRunRow(
      tx,
      snapshot,
      events.map((event) => event.kind),
    );
    if (inbox?.length) await writeInboxItems(tx, snapshot.id, inbox);
    const appended = events.length ? await insertRunEvents(tx, snapshot.id, events) : 0;
    if (triggerFire)
      await tx.nativeUpdate(ProjectTriggerEntity, triggerFire, {
        lastFiredAt: new Date(snapshot.createdAt),
        lastRunId: snapshot.id,
      });
    return { before, appended };
  });
  if (before !== undefined) observeRunProjection(before, snapshot);
  if (before !== undefined && before?.state !== snapshot.state)
    logger({ component: 'worker' }).info(
      { runId: snapshot.id, workflowId: snapshot.id, state: snapshot.state, failureReason: snapshot.failureReason },
      'run state',
    );
  if (appended > 0) observeRunEvents(events);
}
