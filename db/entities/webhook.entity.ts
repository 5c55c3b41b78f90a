import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { LifecycleHook } from '../../core/event-kinds.ts';

// A registered webhook, as the webhooks workflow (the registry's truth) last projected it. No
// secret is stored anywhere: a webhook's signing secret is derived (platform/webhook-signing.ts).
export const WebhookEntity = defineEntity({
  name: 'Webhook',
  tableName: 'webhooks',
  properties: {
    id: p.string().primary().length(64),
    url: p.text(),
    hooks: p.json<LifecycleHook[]>().nullable(),
    description: p.text().nullable(),
    source: p.string().$type<'api' | 'config'>().length(16),
    createdAt: p.datetime(),
  },
});

export type Webhook = InferEntity<typeof WebhookEntity>;
