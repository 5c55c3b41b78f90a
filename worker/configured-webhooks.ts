// The workers' SVC_WEBHOOKS, handed to the webhooks workflow at a worker's start (update-with-start):
// the configured webhooks replace the previous configured set; those registered by the API stay.
import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import { webhooksWorkflowId, type Webhook } from '../core/webhooks.ts';
import { syncConfiguredWebhooksUpdate } from '../workflows/messages.ts';
import type { webhooksWorkflow } from '../workflows/webhooks.workflow.ts';

export async function syncConfiguredWebhooks(
  temporal: Client,
  taskQueue: string,
  webhooks: Webhook[],
): Promise<number> {
  return temporal.workflow.executeUpdateWithStart(syncConfiguredWebhooksUpdate, {
    args: [webhooks],
    startWorkflowOperation: new WithStartWorkflowOperation<typeof webhooksWorkflow>('webhooksWorkflow', {
      workflowId: webhooksWorkflowId(taskQueue),
      taskQueue,
      args: [],
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });
}
