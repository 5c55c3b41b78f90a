// The cluster's pending pods for admission at the door, asked of a worker: the API never talks to
// the cluster (docs/decisions/0039-sandbox-package.md). A short pendingPodsWorkflow on the workers'
// task queue runs one activity that lists svc's pods. No answer in time counts as no count: like a
// cluster that does not answer, it does not block a dispatch.
import { randomUUID } from 'node:crypto';
import type { pendingPodsWorkflow } from '../../workflows/pending-pods.workflow.ts';
import type { TemporalGateway } from './temporal-gateway.ts';

/** How long a dispatch waits for a worker's count (the worker's own list gives up after 10 s). */
const ANSWER_TIMEOUT = '15s';

export function pendingPodsOnAWorker(temporal: TemporalGateway): () => Promise<number | null> {
  return async () => {
    try {
      return await temporal.callUntilClosed(() =>
        temporal.client.workflow.execute<typeof pendingPodsWorkflow>('pendingPodsWorkflow', {
          workflowId: `svc-pending-pods-${randomUUID()}`,
          taskQueue: temporal.taskQueue,
          args: [],
          workflowExecutionTimeout: ANSWER_TIMEOUT,
        }),
      );
    } catch {
      return null;
    }
  };
}
