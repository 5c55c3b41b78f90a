// The activities a worker serves on its data directory's own task queue (platform/data-dir-key.ts):
// work that must run where that directory is, whichever worker of it takes it.
import { createRetentionActivities, type RetentionActivityDeps } from './retention-activities.ts';

export type DataDirActivityDeps = RetentionActivityDeps;

export function createDataDirActivities(deps: DataDirActivityDeps) {
  return { ...createRetentionActivities(deps) };
}

export type DataDirActivities = ReturnType<typeof createDataDirActivities>;
