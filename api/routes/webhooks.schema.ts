// Request and response schemas of the webhook routes: they validate requests and document the API.
import { z } from 'zod';
import { LIFECYCLE_HOOKS } from '../../core/event-kinds.ts';
import { DELIVERY_STATES } from '../../core/webhooks.ts';
import { canonicalInt } from './common.schema.ts';

/** A URL fetch can POST to: it parses, has a host, and carries no user or password. */
function deliverable(url: string): boolean {
  try {
    const parsed = new URL(url);
    return Boolean(parsed.hostname) && !parsed.username && !parsed.password;
  } catch {
    return false;
  }
}

export const createWebhookBody = z
  .object({
    url: z
      .string()
      .max(2048)
      .regex(/^https?:\/\/[^\s/?#]+[^\s]*$/, 'must be an http(s) URL')
      .refine(deliverable, 'must be an http(s) URL with a host and no credentials')
      .describe('Where deliveries are POSTed'),
    hooks: z
      .array(z.enum(LIFECYCLE_HOOKS))
      .min(1)
      .max(LIFECYCLE_HOOKS.length)
      .optional()
      .describe('The lifecycle hooks it receives (GET /events/stream names them); every hook when absent'),
    description: z.string().max(500).optional(),
  })
  .strict();

export const webhookIdParams = z.object({ id: z.string().max(64) }).strict();

export const deliveriesQuery = z.object({ limit: canonicalInt(1, 200).default(50) }).strict();

export const webhookSchema = z.object({
  id: z.string(),
  url: z.string(),
  hooks: z.array(z.enum(LIFECYCLE_HOOKS)).nullable().describe('null: every hook'),
  description: z.string().nullable(),
  source: z.enum(['api', 'config']).describe("api: POST /webhooks; config: the workers' SVC_WEBHOOKS"),
  createdAt: z.string().describe('It receives the events recorded from then on'),
});

const counts = z.object(Object.fromEntries(DELIVERY_STATES.map((state) => [state, z.number().int()])));

export const createWebhookResponse = z.object({
  webhook: webhookSchema,
  secret: z.string().describe('Signs every delivery (X-Svc-Signature); GET /webhooks/{id}/secret shows it again'),
});
export const listWebhooksResponse = z.object({
  webhooks: z.array(webhookSchema.extend({ deliveries: counts.describe('Its deliveries by state') })),
});
export const webhookResponse = z.object({ webhook: webhookSchema });
export const secretResponse = z.object({ id: z.string(), secret: z.string() });

export const deliveriesResponse = z.object({
  deliveries: z.array(
    z.object({
      id: z.string(),
      eventId: z.number().int(),
      hook: z.string(),
      runId: z.string(),
      state: z.enum(DELIVERY_STATES),
      attempts: z.number().int(),
      lastStatusCode: z.number().int().nullable(),
      lastError: z.string().nullable(),
      lastAttemptAt: z.string().nullable(),
      nextAttemptAt: z.string().nullable(),
      deliveredAt: z.string().nullable(),
      createdAt: z.string(),
    }),
  ),
});
