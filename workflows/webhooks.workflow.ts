// Outgoing webhooks (docs/webhooks.md). webhooksWorkflow (`svc-webhooks-<task queue>`) is the
// registry's truth and the dispatcher: it projects the registry to the read model and, while any
// webhook exists, offers the lifecycle events recorded since its cursor (an outbox read by an
// activity), one delivery workflow per (webhook, event). webhookDeliveryWorkflow makes the attempts,
// each recorded, with durable timers between them: none is lost across restarts.
import { allHandlersFinished, condition, continueAsNew, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import { retryDelayMs, sameRegistration, type Webhook, type WebhookDelivery } from '../core/webhooks.ts';
import { webhookAttempt, webhookIo } from './activity-proxies.ts';
import { addWebhookUpdate, removeWebhookUpdate, syncConfiguredWebhooksUpdate } from './messages.ts';

/** The registry, carried across continue-as-new. `cursor`: the last lifecycle event offered. */
export interface WebhooksState {
  webhooks: Webhook[];
  cursor: number | null;
  /** Ids removed (the latest 1,000): a registration retried by its Idempotency-Key never revives one. */
  removed?: string[];
}

/** The registry and its update handlers; each answers once its change is in the read model. */
class WebhookRegistry {
  readonly state: WebhooksState;
  #version = 1;
  #projected = 0;

  constructor(state: WebhooksState) {
    this.state = state;
    setHandler(
      addWebhookUpdate,
      async ({ ifAbsent, ...webhook }) => {
        const existing = this.state.webhooks.find((entry) => entry.id === webhook.id);
        // A repeated idempotent registration answers the webhook it made (the validator checked it matches).
        if (ifAbsent && existing) return existing;
        return this.#add(webhook, existing);
      },
      {
        // Refused before it is recorded: the key names another registration, or a removed one.
        validator: ({ ifAbsent, ...webhook }) => {
          if (!ifAbsent) return;
          const existing = this.state.webhooks.find((entry) => entry.id === webhook.id);
          if (existing && !sameRegistration(existing, webhook))
            throw new Error('idempotency_key_reused: this Idempotency-Key registered another webhook');
          if (this.state.removed?.includes(webhook.id))
            throw new Error('idempotency_key_reused: the webhook this Idempotency-Key registered was removed');
        },
      },
    );
    setHandler(removeWebhookUpdate, async ({ id }) => {
      const existed = this.state.webhooks.some((entry) => entry.id === id);
      if (existed) {
        this.#replace((entry) => entry.id !== id, []);
        this.state.removed = [...(this.state.removed ?? []), id].slice(-1000);
      }
      await this.#projectedNow();
      return existed;
    });
    setHandler(syncConfiguredWebhooksUpdate, async (configured) => {
      // A configured webhook that stays keeps its registration time: it misses nothing across restarts.
      const kept = configured.map((webhook) => {
        const existing = this.state.webhooks.find((entry) => entry.id === webhook.id && entry.url === webhook.url);
        return { ...webhook, createdAt: existing?.createdAt ?? webhook.createdAt };
      });
      this.#replace((entry) => entry.source !== 'config', kept);
      await this.#projectedNow();
      return kept.length;
    });
  }

  async #add(webhook: Webhook, existing: Webhook | undefined): Promise<Webhook> {
    this.#replace(
      (entry) => entry.id !== webhook.id,
      [{ ...webhook, createdAt: existing?.createdAt ?? webhook.createdAt }],
    );
    await this.#projectedNow();
    return this.state.webhooks.find((entry) => entry.id === webhook.id)!;
  }

  get changed(): boolean {
    return this.#projected < this.#version;
  }

  /** Writes the registry to the read model if it changed since the last write. */
  async project(): Promise<void> {
    while (this.changed) {
      const version = this.#version;
      await webhookIo.projectWebhooks({ webhooks: this.state.webhooks });
      this.#projected = version;
    }
  }

  #replace(keep: (entry: Webhook) => boolean, added: Webhook[]): void {
    this.state.webhooks = [...this.state.webhooks.filter(keep), ...added].sort((a, b) => a.createdAt - b.createdAt);
    this.#version += 1;
  }

  async #projectedNow(): Promise<void> {
    const version = this.#version;
    await condition(() => this.#projected >= version);
  }
}

/** The webhooks registry and dispatcher of one instance; runs forever, by continue-as-new. */
export async function webhooksWorkflow(carried?: WebhooksState): Promise<void> {
  const registry = new WebhookRegistry(carried ?? { webhooks: [], cursor: null });
  const moveOn = () => registry.changed || workflowInfo().continueAsNewSuggested;
  for (;;) {
    await registry.project();
    if (workflowInfo().continueAsNewSuggested) break;
    if (registry.state.webhooks.length === 0) {
      await condition(moveOn);
      continue;
    }
    const { cursor, more, pollMs } = await webhookIo.offerLifecycleEvents({
      after: registry.state.cursor,
      webhooks: registry.state.webhooks,
    });
    registry.state.cursor = cursor;
    if (!more) await condition(moveOn, pollMs);
  }
  await condition(allHandlersFinished);
  await registry.project();
  await continueAsNew<typeof webhooksWorkflow>(registry.state);
}

/** One event for one webhook: attempts until delivered, out of attempts, or the webhook is gone. */
export async function webhookDeliveryWorkflow(delivery: WebhookDelivery): Promise<string> {
  for (let attempt = 1; ; attempt += 1) {
    // svc's own failure (after its retries) counts as a failed attempt, not a stuck delivery.
    const outcome = await webhookAttempt
      .deliverWebhook({ ...delivery, attempt })
      .catch(() => (attempt >= delivery.retry.maxAttempts ? 'failed' : 'retrying'));
    if (outcome !== 'retrying') return outcome;
    await sleep(retryDelayMs(attempt, delivery.retry));
  }
}
