import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { DeliveryState } from '../../core/webhooks.ts';

// One lifecycle event offered to one webhook, with its attempts: written by the delivery
// workflow's activity at every attempt (GET /webhooks/{id}/deliveries).
export const WebhookDeliveryEntity = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  indexes: [{ properties: ['webhookId', 'eventId'] }],
  properties: {
    id: p.string().primary().length(128),
    webhookId: p.string().length(64),
    eventId: p.integer(),
    hook: p.string().length(32),
    runId: p.string().length(32),
    state: p.string().$type<DeliveryState>().length(16),
    attempts: p.integer().default(0),
    lastStatusCode: p.integer().nullable(),
    lastError: p.text().nullable(),
    lastAttemptAt: p.datetime().nullable(),
    nextAttemptAt: p.datetime().nullable(),
    deliveredAt: p.datetime().nullable(),
    createdAt: p.datetime(),
  },
});

export type WebhookDelivery = InferEntity<typeof WebhookDeliveryEntity>;
