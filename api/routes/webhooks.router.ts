// Outgoing webhooks: register, list, remove, the secret, and each webhook's deliveries with their attempts.
import { defineRoute } from '../route.ts';
import { idempotencyKeyOf } from '../idempotency-key.ts';
import { presentDelivery, presentDeliveryCounts, presentWebhook } from '../presenters/webhook.presenter.ts';
import type { WebhooksService } from '../services/webhooks.service.ts';
import {
  createWebhookBody,
  createWebhookResponse,
  deliveriesQuery,
  deliveriesResponse,
  listWebhooksResponse,
  secretResponse,
  webhookIdParams,
  webhookResponse,
} from './webhooks.schema.ts';

export function webhooksRoutes(webhooks: WebhooksService) {
  const tags = ['webhooks'];
  return [
    defineRoute({
      method: 'post',
      path: '/webhooks',
      auth: 'admin',
      summary:
        'Register a webhook: lifecycle events are POSTed to it, signed, retried until delivered; ' +
        'an Idempotency-Key makes a retried registration find the same webhook',
      tags,
      body: createWebhookBody,
      bodyRequired: true,
      responses: { 201: { description: 'The webhook, and its signing secret', schema: createWebhookResponse } },
      handler: async ({ body, ctx }) => {
        const { webhook, secret } = await webhooks.add(body, idempotencyKeyOf(ctx));
        return { status: 201, body: { webhook: presentWebhook(webhook), secret } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/webhooks',
      auth: 'readOperator',
      summary: 'List the webhooks, each with its deliveries counted by state',
      tags,
      responses: { 200: { description: 'The webhooks', schema: listWebhooksResponse } },
      handler: async () => {
        const { webhooks: rows, counts } = await webhooks.list();
        const body = rows.map((row) => ({
          ...presentWebhook(row),
          deliveries: presentDeliveryCounts(counts.get(row.id)),
        }));
        return { status: 200, body: { webhooks: body } };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/webhooks/{id}',
      auth: 'admin',
      summary: 'Remove a webhook registered through the API: its pending deliveries are abandoned',
      tags,
      params: webhookIdParams,
      responses: { 200: { description: 'The removed webhook', schema: webhookResponse } },
      handler: async ({ params }) => ({
        status: 200,
        body: { webhook: presentWebhook(await webhooks.remove(params.id)) },
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/webhooks/{id}/secret',
      auth: 'admin',
      summary: "The webhook's signing secret (derived from the operator token, never stored)",
      tags,
      params: webhookIdParams,
      responses: { 200: { description: 'The secret', schema: secretResponse } },
      handler: async ({ params }) => {
        await webhooks.get(params.id);
        return { status: 200, body: { id: params.id, secret: webhooks.secret(params.id) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/webhooks/{id}/deliveries',
      auth: 'readOperator',
      summary: "The webhook's deliveries, newest event first, with their attempts",
      tags,
      params: webhookIdParams,
      query: deliveriesQuery,
      responses: { 200: { description: 'The deliveries', schema: deliveriesResponse } },
      handler: async ({ params, query }) => ({
        status: 200,
        body: { deliveries: (await webhooks.deliveries(params.id, query.limit)).map(presentDelivery) },
      }),
    }),
  ];
}
