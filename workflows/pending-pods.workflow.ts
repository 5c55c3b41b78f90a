// pendingPodsWorkflow: POST /runs on the Kubernetes backend asks a worker how many of svc's pods the
// cluster has not started (admission's SVC_ADMISSION_PENDING_PODS): the API never talks to the
// cluster. One activity; the workflow keeps nothing.
import { capacityIo } from './activity-proxies.ts';

export async function pendingPodsWorkflow(): Promise<number | null> {
  return capacityIo.countPendingPods();
}
