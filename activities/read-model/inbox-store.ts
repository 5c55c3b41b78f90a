// The projection of a run's inbox: one row per message, upserted by id.
import type { EntityManager } from '@mikro-orm/sql';
import type { InboxItem } from '../../core/inbox.ts';
import { InboxMessageEntity } from '../../db/entities/index.ts';

/** Upserts the run's inbox items inside the caller's transaction (the projection's). */
export async function writeInboxItems(tx: EntityManager, runId: string, items: InboxItem[]): Promise<void> {
  const existing = await tx.find(InboxMessageEntity, { id: { $in: items.map((item) => item.id) } });
  for (const item of items) {
    const data = {
      targetRunId: runId,
      seq: item.seq,
      body: item.body,
      priority: item.priority,
      fromActor: item.fromActor,
      state: item.state,
      createdAt: new Date(item.createdAt),
      deliveredAt: item.deliveredAt ? new Date(item.deliveredAt) : null,
      deliveredRunId: item.deliveredRunId,
    };
    const row = existing.find((candidate) => candidate.id === item.id);
    if (row) tx.assign(row, data);
    else tx.create(InboxMessageEntity, { id: item.id, ...data });
  }
  await tx.flush();
}
