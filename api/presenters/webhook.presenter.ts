// Webhooks and their deliveries as the API presents them (api/routes/webhooks.schema.ts).
import { DELIVERY_STATES, type DeliveryState } from '../../core/webhooks.ts';
import type { Webhook, WebhookDelivery } from '../../db/entities/index.ts';

const iso = (value: Date | null | undefined) => (value ? value.toISOString() : null);

export function presentWebhook(webhook: Webhook) {
  return {
    id: webhook.id,
    url: webhook.url,
    hooks: webhook.hooks ?? null,
    description: webhook.description ?? null,
    source: webhook.source,
    createdAt: webhook.createdAt.toISOString(),
  };
}

/** Every state counted, those with no delivery as 0. */
export function presentDeliveryCounts(counts: Partial<Record<DeliveryState, number>> | undefined) {
  return Object.fromEntries(DELIVERY_STATES.map((state) => [state, counts?.[state] ?? 0])) as Record<
    DeliveryState,
    number
  >;
}

export function presentDelivery(delivery: WebhookDelivery) {
  return {
    id: delivery.id,
    eventId: delivery.eventId,
    hook: delivery.hook,
    runId: delivery.runId,
    state: delivery.state,
    attempts: delivery.attempts,
    lastStatusCode: delivery.lastStatusCode ?? null,
    lastError: delivery.lastError ?? null,
    lastAttemptAt: iso(delivery.lastAttemptAt),
    nextAttemptAt: iso(delivery.nextAttemptAt),
    deliveredAt: iso(delivery.deliveredAt),
    createdAt: delivery.createdAt.toISOString(),
  };
}
