// Webhooks: registered and removed through the webhooks workflow (the registry's truth, which
// answers once the read model shows the change), read from the read model. docs/webhooks.md.
import { WithStartWorkflowOperation, WorkflowUpdateFailedError } from '@temporalio/client';
import type { LifecycleHook } from '../../core/event-kinds.ts';
import { idempotentId, newId } from '../../core/ids.ts';
import { sameRegistration, webhooksWorkflowId, type Webhook } from '../../core/webhooks.ts';
import type { Webhook as WebhookRow } from '../../db/entities/index.ts';
import type { WebhooksRepository } from '../../db/repositories/webhooks.repository.ts';
import { webhookSecret } from '../../platform/webhook-signing.ts';
import { decideWebhookTarget } from '../../platform/webhook-targets.ts';
import type { EgressRule } from '../../core/egress-rules.ts';
import { addWebhookUpdate, removeWebhookUpdate } from '../../workflows/messages.ts';
import type { webhooksWorkflow } from '../../workflows/webhooks.workflow.ts';
import { Errors } from '../errors.ts';
import type { TemporalGateway } from './temporal-gateway.ts';
import { wrapConnectionError } from './temporal-errors.ts';

export interface WebhooksServiceDeps {
  rows: WebhooksRepository;
  temporal: TemporalGateway;
  /** Webhook secrets derive from it (platform/webhook-signing.ts). */
  operatorToken: string;
  /** SVC_WEBHOOK_PRIVATE_TARGETS: where a receiver on a private address may be. */
  privateTargets: EgressRule[];
}

export class WebhooksService {
  readonly #deps: WebhooksServiceDeps;

  constructor(deps: WebhooksServiceDeps) {
    this.#deps = deps;
  }

  /**
   * Registers a webhook; its secret is answered with it. With an idempotency key the webhook's id
   * derives from it: a registration retried after an error (it may have landed) finds the same one.
   */
  async add(body: { url: string; hooks?: LifecycleHook[]; description?: string }, idempotencyKey?: string) {
    const target = await decideWebhookTarget(body.url, this.#deps.privateTargets);
    // A name that does not resolve yet may later: only a private destination is refused up front.
    if ('refusal' in target && !target.unresolvable) throw Errors.webhookTargetRefused(target.refusal);
    const id = idempotencyKey ? idempotentId('webhook', idempotencyKey) : newId('webhook');
    const hooks = body.hooks ? [...new Set(body.hooks)] : null;
    const known = idempotencyKey ? await this.#deps.rows.find(id) : null;
    if (known) {
      // A quick answer from the read model; the registry's validator decides when it has not caught up.
      if (!sameRegistration(known, { url: body.url, hooks, description: body.description ?? null }))
        throw Errors.idempotencyKeyReused();
      return { webhook: known, secret: this.secret(id) };
    }
    const webhook: Webhook = {
      id,
      url: body.url,
      hooks,
      description: body.description ?? null,
      source: 'api',
      createdAt: Date.now(),
    };
    const { client, taskQueue } = this.#deps.temporal;
    try {
      await this.#deps.temporal.call(() =>
        client.workflow.executeUpdateWithStart(addWebhookUpdate, {
          // With a key the registry decides (one at a time): the same registration again, or a refusal.
          args: [idempotencyKey ? { ...webhook, ifAbsent: true } : webhook],
          startWorkflowOperation: new WithStartWorkflowOperation<typeof webhooksWorkflow>('webhooksWorkflow', {
            workflowId: webhooksWorkflowId(taskQueue),
            taskQueue,
            args: [],
            workflowIdConflictPolicy: 'USE_EXISTING',
          }),
        }),
      );
    } catch (error) {
      if (idempotencyKey && error instanceof WorkflowUpdateFailedError) throw Errors.idempotencyKeyReused();
      throw wrapConnectionError(error);
    }
    return { webhook: await this.get(webhook.id), secret: this.secret(webhook.id) };
  }

  async list() {
    const [webhooks, counts] = await Promise.all([this.#deps.rows.all(), this.#deps.rows.deliveryCounts()]);
    return { webhooks, counts };
  }

  async get(id: string): Promise<WebhookRow> {
    const row = await this.#deps.rows.find(id);
    if (!row) throw Errors.notFound(`webhook "${id}"`, 'GET /webhooks lists the registered webhooks');
    return row;
  }

  /** Removes an API-registered webhook (a configured one goes with SVC_WEBHOOKS); answers it. */
  async remove(id: string): Promise<WebhookRow> {
    const row = await this.get(id);
    if (row.source === 'config')
      throw Errors.conflict(
        `webhook ${id} comes from SVC_WEBHOOKS`,
        'remove it from SVC_WEBHOOKS and restart the workers',
      );
    const { client, taskQueue } = this.#deps.temporal;
    try {
      await this.#deps.temporal.call(() =>
        client.workflow.getHandle(webhooksWorkflowId(taskQueue)).executeUpdate(removeWebhookUpdate, { args: [{ id }] }),
      );
    } catch (error) {
      throw wrapConnectionError(error);
    }
    return row;
  }

  async deliveries(id: string, limit: number) {
    await this.get(id);
    return this.#deps.rows.deliveries(id, limit);
  }

  /** The webhook's signing secret (derived, never stored). */
  secret(id: string): string {
    return webhookSecret(this.#deps.operatorToken, id);
  }
}
