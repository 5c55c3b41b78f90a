// Outgoing webhooks: what an operator registers, which lifecycle events it receives,
// and how a failed delivery is retried. Pure: the webhooks workflows replay it; signing (crypto)
// lives in platform/webhook-signing.ts.
import type { EgressRule } from './egress-rules.ts';
import { LIFECYCLE_HOOKS, type LifecycleHook } from './event-kinds.ts';

/** A registered receiver of lifecycle events. */
export interface Webhook {
  id: string;
  url: string;
  /** The hooks it receives; null: every hook. */
  hooks: LifecycleHook[] | null;
  description: string | null;
  /** `api`: POST /webhooks; `config`: the workers' SVC_WEBHOOKS. */
  source: 'api' | 'config';
  /** Epoch ms: it receives the events recorded from then on. */
  createdAt: number;
}

type Registration = { url: string; hooks?: Webhook['hooks']; description?: string | null };

/** The same registration: what a request repeated under its Idempotency-Key must match. */
export function sameRegistration(a: Registration, b: Registration): boolean {
  return (
    a.url === b.url &&
    JSON.stringify(a.hooks ?? null) === JSON.stringify(b.hooks ?? null) &&
    (a.description ?? null) === (b.description ?? null)
  );
}

/** How a delivery is retried: `baseMs` doubles per attempt, up to an hour, `maxAttempts` in all. */
export interface WebhookRetry {
  baseMs: number;
  maxAttempts: number;
}

/** The workers' webhook settings (platform/config.ts). */
export interface WebhookSettings {
  pollMs: number;
  /**
   * SVC_WEBHOOK_PRIVATE_TARGETS: the private destinations (loopback, a private network) deliveries
   * may reach; every other target must resolve to public addresses (platform/webhook-targets.ts).
   */
  privateTargets: EgressRule[];
  retry: WebhookRetry;
  /** Events younger than this are left for the next look (a transaction that commits late). */
  settleMs: number;
  timeoutMs: number;
}

export const DELIVERY_STATES = ['pending', 'retrying', 'delivered', 'failed', 'abandoned'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** What a delivery workflow is given: one event for one webhook. */
export interface WebhookDelivery {
  deliveryId: string;
  webhookId: string;
  eventId: number;
  hook: LifecycleHook;
  runId: string;
  retry: WebhookRetry;
}

/** The delivery workflow's signature (workflows/webhooks.workflow.ts), for the activity that starts it. */
export type WebhookDeliveryWorkflow = (delivery: WebhookDelivery) => Promise<string>;

/** The workflow id of an instance's webhooks registry (one per task queue, like the admission queue). */
export const webhooksWorkflowId = (taskQueue: string) => `svc-webhooks-${taskQueue}`;

/** A delivery's id, also its workflow id: one delivery per (webhook, event), however often it is offered. */
export const deliveryId = (webhookId: string, eventId: number) => `whd-${webhookId}-${eventId}`;

/** Whether the webhook takes this event: its hooks, and recorded after it was registered. */
export function wants(webhook: Webhook, event: { hook: string; ts: number }): boolean {
  return (!webhook.hooks || (webhook.hooks as string[]).includes(event.hook)) && event.ts >= webhook.createdAt;
}

/** The wait after a failed attempt (1-based): base, 2×base, 4×base, … at most an hour. */
export function retryDelayMs(attempt: number, retry: WebhookRetry): number {
  return Math.min(retry.baseMs * 2 ** Math.max(0, attempt - 1), 60 * 60_000);
}

/** SVC_WEBHOOKS: a JSON list of `{id, url, hooks?, description?}` (ids: lowercase slugs). */
export function parseConfiguredWebhooks(raw: string | undefined, now: number): Webhook[] {
  if (!raw?.trim()) return [];
  const parsed: unknown = JSON.parse(raw);
  if (!Array.isArray(parsed)) throw new Error('SVC_WEBHOOKS must be a JSON list of {id, url, hooks?, description?}');
  return parsed.map((entry: Record<string, unknown>, index) => {
    const duplicate = parsed.findIndex((other: Record<string, unknown>) => other?.id === entry?.id) !== index;
    const problem = duplicate ? `id "${String(entry.id)}" appears twice` : webhookProblem(entry);
    if (problem) throw new Error(`SVC_WEBHOOKS[${index}]: ${problem}`);
    return {
      id: `cfg-${entry.id as string}`,
      url: entry.url as string,
      hooks: (entry.hooks as LifecycleHook[] | undefined) ?? null,
      description: (entry.description as string | undefined) ?? null,
      source: 'config' as const,
      createdAt: now,
    };
  });
}

function webhookProblem(entry: Record<string, unknown>): string | null {
  if (typeof entry?.id !== 'string' || !/^[a-z0-9][a-z0-9-]{0,39}$/.test(entry.id))
    return 'id must be a lowercase slug';
  if (typeof entry.url !== 'string' || !/^https?:\/\/[^\s]+$/.test(entry.url)) return 'url must be an http(s) URL';
  if (!URL.canParse(entry.url) || new URL(entry.url).username || new URL(entry.url).password)
    return 'url must parse, without credentials';
  if (entry.hooks !== undefined) {
    if (!Array.isArray(entry.hooks)) return 'hooks must be a list';
    const unknown = entry.hooks.filter((hook) => !(LIFECYCLE_HOOKS as readonly unknown[]).includes(hook));
    if (unknown.length) return `unknown hooks: ${unknown.join(', ')}`;
  }
  return null;
}
