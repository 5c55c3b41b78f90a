export { ProjectEntity, type Project } from './project.entity.ts';
export { RunEntity, type Run } from './run.entity.ts';
export { RunEventEntity, type RunEvent } from './run-event.entity.ts';
export { PlanRunEntity, type PlanRun } from './plan-run.entity.ts';
export { PlanRunChildEntity, type PlanRunChild } from './plan-run-child.entity.ts';
export { InboxMessageEntity, type InboxMessage } from './inbox-message.entity.ts';
export { ProjectTriggerEntity, type ProjectTrigger } from './project-trigger.entity.ts';
export { LifecycleEventEntity, type LifecycleEvent } from './lifecycle-event.entity.ts';
export { RunTotalEntity, type RunTotal } from './run-total.entity.ts';
export { WebhookEntity, type Webhook } from './webhook.entity.ts';
export { WebhookDeliveryEntity, type WebhookDelivery } from './webhook-delivery.entity.ts';
export { RetentionPassEntity, type RetentionPass } from './retention-pass.entity.ts';
export { OneTimeSecretEntity, type OneTimeSecret } from './one-time-secret.entity.ts';
export { ProjectSecretEntity, type ProjectSecret } from './project-secret.entity.ts';

import { ProjectEntity } from './project.entity.ts';
import { RunEntity } from './run.entity.ts';
import { RunEventEntity } from './run-event.entity.ts';
import { PlanRunEntity } from './plan-run.entity.ts';
import { PlanRunChildEntity } from './plan-run-child.entity.ts';
import { InboxMessageEntity } from './inbox-message.entity.ts';
import { ProjectTriggerEntity } from './project-trigger.entity.ts';
import { LifecycleEventEntity } from './lifecycle-event.entity.ts';
import { RunTotalEntity } from './run-total.entity.ts';
import { WebhookEntity } from './webhook.entity.ts';
import { WebhookDeliveryEntity } from './webhook-delivery.entity.ts';
import { RetentionPassEntity } from './retention-pass.entity.ts';
import { OneTimeSecretEntity } from './one-time-secret.entity.ts';
import { ProjectSecretEntity } from './project-secret.entity.ts';

export const ALL_ENTITIES = [
  ProjectEntity,
  RunEntity,
  RunEventEntity,
  PlanRunEntity,
  PlanRunChildEntity,
  InboxMessageEntity,
  ProjectTriggerEntity,
  LifecycleEventEntity,
  RunTotalEntity,
  WebhookEntity,
  WebhookDeliveryEntity,
  RetentionPassEntity,
  OneTimeSecretEntity,
  ProjectSecretEntity,
];
