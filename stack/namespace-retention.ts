// How long the embedded Temporal server keeps a closed workflow's history (SVC_RETENTION_TEMPORAL):
// svc owns that server, so it sets its namespace's retention. An external cluster's is its
// operator's to set (docs/operations.md, "Running svc for a year").
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';

/** Sets `namespace`'s retention to `ms` (whole seconds) unless it already is; answers whether it changed. */
export async function setNamespaceRetention(address: string, namespace: string, ms: number): Promise<boolean> {
  const connection = await Connection.connect({ address });
  try {
    const seconds = Math.round(ms / 1000);
    const { config } = await connection.workflowService.describeNamespace({ namespace });
    if (Number(config?.workflowExecutionRetentionTtl?.seconds ?? 0) === seconds) return false;
    await connection.workflowService.updateNamespace({
      namespace,
      config: { workflowExecutionRetentionTtl: msToTs(seconds * 1000) },
    });
    return true;
  } finally {
    await connection.close();
  }
}
