// reconcileWorkflow: one pass of the reconciler, started by its Temporal Schedule, once at every
// worker's start, and by the API for a run it finds closed under a row that says otherwise.
import type { ReconcileReport, ReconcileRequest } from '../activities/reconcile-activities.ts';
import { maintenance } from './activity-proxies.ts';

export async function reconcileWorkflow(request: ReconcileRequest = {}): Promise<ReconcileReport> {
  return maintenance.reconcileReadModel(request);
}
