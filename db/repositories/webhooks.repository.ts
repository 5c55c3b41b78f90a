// The API's reads of webhooks and their deliveries (written by the webhooks workflows' activities).
import { raw } from '@mikro-orm/core';
import type { DeliveryState } from '../../core/webhooks.ts';
import { WebhookDeliveryEntity, WebhookEntity, type Webhook, type WebhookDelivery } from '../entities/index.ts';
import type { ReadModel } from '../orm.ts';

export class WebhooksRepository {
  readonly #readModel: ReadModel;

  constructor(readModel: ReadModel) {
    this.#readModel = readModel;
  }

  /** Every webhook, oldest first. */
  all(): Promise<Webhook[]> {
    return this.#readModel.em().find(WebhookEntity, {}, { orderBy: { createdAt: 'asc', id: 'asc' } });
  }

  find(id: string): Promise<Webhook | null> {
    return this.#readModel.em().findOne(WebhookEntity, { id });
  }

  /** The webhook's deliveries, newest event first. */
  deliveries(webhookId: string, limit: number): Promise<WebhookDelivery[]> {
    return this.#readModel.em().find(WebhookDeliveryEntity, { webhookId }, { orderBy: { eventId: 'desc' }, limit });
  }

  /** Per webhook, how many of its deliveries are in each state. */
  async deliveryCounts(): Promise<Map<string, Partial<Record<DeliveryState, number>>>> {
    const rows = await this.#readModel
      .em()
      .createQueryBuilder(WebhookDeliveryEntity)
      .select(['webhookId', 'state', raw('count(*) as count')])
      .groupBy(['webhookId', 'state'])
      .execute<{ webhookId: string; state: DeliveryState; count: number | string }[]>('all');
    const counts = new Map<string, Partial<Record<DeliveryState, number>>>();
    for (const row of rows) counts.set(row.webhookId, { ...counts.get(row.webhookId), [row.state]: Number(row.count) });
    return counts;
  }
}
