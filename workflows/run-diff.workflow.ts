// runDiffWorkflow: GET /runs/{id}/diff asks a worker for a run's change (its bytes live on the
// worker's side: the running workspace, the project clone, the salvage store, the forge) and
// waits for the answer. One activity; the workflow keeps nothing.
import type { RunDiffAnswer, RunDiffRequest } from '../core/run-diff.ts';
import { diffIo } from './activity-proxies.ts';

export async function runDiffWorkflow(request: RunDiffRequest): Promise<RunDiffAnswer> {
  return diffIo.computeRunDiff(request);
}
