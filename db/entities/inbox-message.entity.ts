import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { InboxPriority, InboxState } from '../../core/run-states.ts';

// A steering message, projected from its run's workflow (which owns the inbox). `seq` counts the
// run's messages and orders claims FIFO within a priority.
export const InboxMessageEntity = defineEntity({
  name: 'InboxMessage',
  tableName: 'inbox_messages',
  indexes: [{ properties: ['targetRunId', 'state'] }],
  uniques: [{ properties: ['targetRunId', 'seq'] }],
  properties: {
    id: p.string().primary().length(32),
    seq: p.integer(),
    targetRunId: p.string().length(32),
    deliveredRunId: p.string().length(32).nullable(),
    body: p.text(),
    priority: p.string().$type<InboxPriority>().length(16),
    fromActor: p.string().length(255),
    state: p.string().$type<InboxState>().length(16),
    createdAt: p.datetime(),
    deliveredAt: p.datetime().nullable(),
  },
});

export type InboxMessage = InferEntity<typeof InboxMessageEntity>;
