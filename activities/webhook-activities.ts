// The webhooks' I/O (workflows/webhooks.workflow.ts): the registry's projection, the outbox read
// that offers lifecycle events to webhooks (starting one delivery workflow per pair), and one
// signed delivery attempt, recorded whatever it answers.
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import {
  deliveryId,
  wants,
  type DeliveryState,
  type Webhook,
  type WebhookDelivery,
  type WebhookDeliveryWorkflow,
  type WebhookSettings,
} from '../core/webhooks.ts';
import type { LifecycleHook } from '../core/event-kinds.ts';
import { LifecycleEventEntity, RunEntity, WebhookDeliveryEntity, WebhookEntity } from '../db/entities/index.ts';
import type { ReadModel } from '../db/orm.ts';
import { signWebhook, WEBHOOK_HEADERS, webhookSecret } from '../platform/webhook-signing.ts';
import { postWebhook } from '../platform/webhook-targets.ts';
import { retryDelayMs } from '../core/webhooks.ts';

export interface WebhookActivityDeps {
  readModel: ReadModel;
  temporal: Client;
  taskQueue: string;
  /** Webhook secrets derive from it (platform/webhook-signing.ts). */
  operatorToken?: string;
  webhooks?: WebhookSettings;
}

const DEFAULT_SETTINGS: WebhookSettings = {
  pollMs: 2000,
  privateTargets: [],
  retry: { baseMs: 10_000, maxAttempts: 10 },
  settleMs: 2000,
  timeoutMs: 10_000,
};
const BATCH = 200;
const OFFER_BUDGET_MS = 20_000;
const LATE_WINDOW_MS = 60_000;
const LATE_WINDOW_IDS = 2000;

export function createWebhookActivities(deps: WebhookActivityDeps) {
  const settings = deps.webhooks ?? DEFAULT_SETTINGS;
  return {
    /** The registry as the workflow holds it, written over the table's. */
    async projectWebhooks({ webhooks }: { webhooks: Webhook[] }): Promise<void> {
      await deps.readModel.em().transactional(async (tx) => {
        await tx.nativeDelete(WebhookEntity, { id: { $nin: webhooks.map((webhook) => webhook.id) } });
        for (const webhook of webhooks)
          await tx.upsert(WebhookEntity, {
            id: webhook.id,
            url: webhook.url,
            hooks: webhook.hooks,
            description: webhook.description,
            source: webhook.source,
            createdAt: new Date(webhook.createdAt),
          });
      });
    },

    /**
     * Offers the lifecycle events after `after` to every webhook that wants them, in id order, and
     * answers the new cursor. The first look starts where the oldest webhook was registered.
     */
    async offerLifecycleEvents({ after, webhooks }: { after: number | null; webhooks: Webhook[] }) {
      const em = deps.readModel.em();
      if (after === null) {
        // The first look: from the last event recorded before the oldest webhook, not the whole history.
        const since = new Date(Math.min(...webhooks.map((webhook) => webhook.createdAt)));
        const [last] = await em.find(
          LifecycleEventEntity,
          { ts: { $lt: since } },
          { orderBy: { id: 'desc' }, limit: 1 },
        );
        return { cursor: last?.id ?? 0, more: true, pollMs: settings.pollMs };
      }
      const events = await em.find(
        LifecycleEventEntity,
        { id: { $gt: after } },
        { orderBy: { id: 'asc' }, limit: BATCH },
      );
      const settledBefore = Date.now() - settings.settleMs;
      const settled = events.slice(
        0,
        indexOrLength(events, (event) => event.ts.getTime() > settledBefore),
      );
      await offerLateCommits(deps, settings, webhooks, after);
      // A time budget per look: a backlog is offered over several looks, each ending with its cursor.
      const started = Date.now();
      let cursor = after;
      for (const event of settled) {
        if (Date.now() - started > OFFER_BUDGET_MS) return { cursor, more: true, pollMs: settings.pollMs };
        const takers = webhooks.filter((candidate) => wants(candidate, { hook: event.hook, ts: event.ts.getTime() }));
        await Promise.all(takers.map((webhook) => offer(deps, settings, webhook, event)));
        cursor = event.id;
      }
      return { cursor, more: settled.length === BATCH, pollMs: settings.pollMs };
    },

    /** One attempt: POST the signed event; answers what the delivery is now. */
    async deliverWebhook(delivery: WebhookDelivery & { attempt: number }): Promise<DeliveryState> {
      const em = deps.readModel.em();
      const webhook = await em.findOne(WebhookEntity, { id: delivery.webhookId });
      if (!webhook) {
        await em.nativeUpdate(
          WebhookDeliveryEntity,
          { id: delivery.deliveryId },
          { state: 'abandoned', nextAttemptAt: null },
        );
        return 'abandoned';
      }
      const body = JSON.stringify(await deliveryBody(deps.readModel, delivery));
      const timestamp = Math.floor(Date.now() / 1000);
      const secret = webhookSecret(deps.operatorToken ?? '', webhook.id);
      let status: number | null = null;
      let error: string | null = null;
      try {
        const headers = {
          'content-type': 'application/json',
          'user-agent': 'svc-webhooks',
          [WEBHOOK_HEADERS.event]: delivery.hook,
          [WEBHOOK_HEADERS.delivery]: delivery.deliveryId,
          [WEBHOOK_HEADERS.timestamp]: String(timestamp),
          [WEBHOOK_HEADERS.signature]: signWebhook(secret, timestamp, body),
        };
        status = await postWebhook(webhook.url, headers, body, settings);
        if (status < 200 || status >= 300) error = `the receiver answered ${status}`;
      } catch (failure) {
        error = (failure as Error).message.slice(0, 500);
      }
      const now = new Date();
      const state: DeliveryState =
        error === null ? 'delivered' : delivery.attempt >= delivery.retry.maxAttempts ? 'failed' : 'retrying';
      await em.nativeUpdate(
        WebhookDeliveryEntity,
        { id: delivery.deliveryId },
        {
          state,
          attempts: delivery.attempt,
          lastStatusCode: status,
          lastError: error,
          lastAttemptAt: now,
          deliveredAt: state === 'delivered' ? now : null,
          nextAttemptAt:
            state === 'retrying' ? new Date(now.getTime() + retryDelayMs(delivery.attempt, delivery.retry)) : null,
        },
      );
      return state;
    },
  };
}

/**
 * Events at or below the cursor recorded in the last minute that have no delivery yet: on
 * PostgreSQL a transaction can commit a lower id after a higher one was read (a row lock, a
 * skewed clock). Offers are idempotent, so looking again costs a query, never a second delivery.
 */
async function offerLateCommits(
  deps: WebhookActivityDeps,
  settings: WebhookSettings,
  webhooks: Webhook[],
  cursor: number,
): Promise<void> {
  const em = deps.readModel.em();
  const recent = await em.find(
    LifecycleEventEntity,
    { id: { $lte: cursor, $gt: cursor - LATE_WINDOW_IDS }, ts: { $gt: new Date(Date.now() - LATE_WINDOW_MS) } },
    { orderBy: { id: 'asc' } },
  );
  if (!recent.length) return;
  const offered = await em.find(
    WebhookDeliveryEntity,
    { eventId: { $in: recent.map((event) => event.id) } },
    { fields: ['id'] },
  );
  const known = new Set(offered.map((delivery) => delivery.id));
  for (const event of recent)
    for (const webhook of webhooks)
      if (wants(webhook, { hook: event.hook, ts: event.ts.getTime() }) && !known.has(deliveryId(webhook.id, event.id)))
        await offer(deps, settings, webhook, event);
}

/** Records the delivery and starts its workflow; an offer made again (a retried look) finds both. */
async function offer(
  deps: WebhookActivityDeps,
  settings: WebhookSettings,
  webhook: Webhook,
  event: { id: number; hook: string; runId: string },
): Promise<void> {
  const id = deliveryId(webhook.id, event.id);
  await deps.readModel
    .em()
    .createQueryBuilder(WebhookDeliveryEntity)
    .insert({
      id,
      webhookId: webhook.id,
      eventId: event.id,
      hook: event.hook,
      runId: event.runId,
      state: 'pending',
      attempts: 0,
      createdAt: new Date(),
    })
    .onConflict('id')
    .ignore()
    .execute();
  const delivery: WebhookDelivery = {
    deliveryId: id,
    webhookId: webhook.id,
    eventId: event.id,
    hook: event.hook as LifecycleHook,
    runId: event.runId,
    retry: settings.retry,
  };
  try {
    await deps.temporal.workflow.start<WebhookDeliveryWorkflow>('webhookDeliveryWorkflow', {
      workflowId: id,
      taskQueue: deps.taskQueue,
      args: [delivery],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}

/** What a receiver gets: the event, and the run as it is at the attempt. */
async function deliveryBody(readModel: ReadModel, delivery: WebhookDelivery) {
  const em = readModel.em();
  const [event, run] = await Promise.all([
    em.findOne(LifecycleEventEntity, { id: delivery.eventId }),
    em.findOne(RunEntity, { id: delivery.runId }),
  ]);
  return {
    deliveryId: delivery.deliveryId,
    webhookId: delivery.webhookId,
    hook: delivery.hook,
    eventId: delivery.eventId,
    ts: event?.ts.toISOString() ?? null,
    state: event?.state ?? null,
    run: run && {
      id: run.id,
      state: run.state,
      failureReason: run.failureReason ?? null,
      projectId: run.projectId ?? null,
      agentName: run.agentName,
      trigger: run.trigger,
      branch: run.branch ?? null,
      prUrl: run.prUrl ?? null,
      prState: run.prState ?? null,
      costUsd: run.costUsd === null || run.costUsd === undefined ? null : Number(run.costUsd),
      startedAt: run.startedAt?.toISOString() ?? null,
      endedAt: run.endedAt?.toISOString() ?? null,
    },
  };
}

function indexOrLength<T>(items: T[], predicate: (item: T) => boolean): number {
  const index = items.findIndex(predicate);
  return index === -1 ? items.length : index;
}
