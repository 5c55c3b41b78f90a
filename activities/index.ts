// createActivities(deps): every activity the worker registers, built from its dependencies.
import { createFinalizeActivities, type FinalizeActivityDeps } from './finalize-activities.ts';
import { createProjectActivities, type ProjectActivityDeps } from './project-activities.ts';
import { createRunActivities, type RunActivityDeps } from './run-activities.ts';

export type { RunEventInput } from './read-model/run-projection.ts';

export type ActivityDeps = RunActivityDeps & ProjectActivityDeps & FinalizeActivityDeps;

export function createActivities(deps: ActivityDeps) {
  return {
    ...createRunActivities(deps),
    ...createProjectActivities(deps),
    ...createFinalizeActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
