// POST /alerts/heal: Sentry and Grafana webhooks in, healer runs out (docs/operations.md).
import { defineRoute } from '../route.ts';
import type { HealerService } from '../services/healer.service.ts';
import { healBody, healDispatchedResponse, healQuery, healSkippedResponse } from './alerts.schema.ts';

export function alertsRoutes(healer: HealerService) {
  return [
    defineRoute({
      method: 'post',
      path: '/alerts/heal',
      auth: 'dispatch',
      summary: 'Heal an alert: a healer run for the project the alert maps to, within its cooldown and retry limit',
      tags: ['alerts'],
      query: healQuery,
      body: healBody,
      bodyRequired: true,
      responses: {
        202: { description: 'A healer run was dispatched for the alert', schema: healDispatchedResponse },
        200: { description: 'The alert dispatched nothing, and why', schema: healSkippedResponse },
      },
      handler: async ({ query, body }) => {
        const outcome = await healer.heal(query.source, body);
        return { status: outcome.status === 'dispatched' ? 202 : 200, body: outcome };
      },
    }),
  ];
}
