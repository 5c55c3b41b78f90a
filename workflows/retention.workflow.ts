// retentionWorkflow: one retention pass over a data directory, started by that directory's Temporal
// Schedule (worker/retention-schedule.ts) and run on its workers' own task queue. The workflow
// keeps nothing: the pass's report is its result and the read model's `retention_passes` row.
import type { RetentionReport } from '../activities/retention-activities.ts';
import { dataDirMaintenance } from './activity-proxies.ts';

export async function retentionWorkflow(request: { dataDirQueue: string }): Promise<RetentionReport> {
  return dataDirMaintenance(request.dataDirQueue).sweepDataDirectory();
}
