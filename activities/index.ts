// createActivities(deps): every activity the worker registers, built from its dependencies.
import { createAdmissionActivities, type AdmissionActivityDeps } from './admission-activities.ts';
import { createAgentActivities } from './agent-activities.ts';
import { createAgentControlActivities } from './agent-control-activities.ts';
import { createPrLoopActivities, type PrLoopActivityDeps } from './pr-loop-activities.ts';
import { createWebhookActivities, type WebhookActivityDeps } from './webhook-activities.ts';
import { createDiffActivities } from './diff-activities.ts';
import { createEnvironmentActivities } from './environment-activities.ts';
import { createEnvironmentServiceActivities } from './environment-services.ts';
import { createFinalizeActivities, type FinalizeActivityDeps } from './finalize-activities.ts';
import { withHeartbeats } from './keep-alive.ts';
import { createPreviewActivities, type PreviewActivityDeps } from './preview-activities.ts';
import { createPlanActivities, type PlanActivityDeps } from './plan-activities.ts';
import { createProjectActivities, type ProjectActivityDeps } from './project-activities.ts';
import { createReconcileActivities } from './reconcile-activities.ts';
import { createRunActivities, type RunActivityDeps } from './run-activities.ts';
import { createRunWorkflowActivities, type RunWorkflowActivityDeps } from './run-workflow-activities.ts';
import { createStartActivities } from './start-activities.ts';

export type { RunEventInput } from './read-model/run-projection.ts';

export type { PlanEventInput } from './read-model/plan-run-projection.ts';

export type ActivityDeps = RunActivityDeps &
  ProjectActivityDeps &
  FinalizeActivityDeps &
  PlanActivityDeps &
  PreviewActivityDeps &
  AdmissionActivityDeps &
  WebhookActivityDeps &
  PrLoopActivityDeps &
  RunWorkflowActivityDeps;

/**
 * Every activity the worker registers, built from its dependencies (read model, Temporal client,
 * agent catalogue, sandbox settings): the only place workflows' I/O happens.
 */
export function createActivities(deps: ActivityDeps) {
  const projects = createProjectActivities(deps);
  const agents = createAgentActivities(deps);
  return withHeartbeats({
    ...createRunActivities(deps),
    ...agents,
    ...createStartActivities(deps, agents),
    ...createEnvironmentActivities(deps),
    ...createEnvironmentServiceActivities(deps),
    ...createAgentControlActivities(deps),
    ...projects,
    ...createFinalizeActivities(deps),
    ...createDiffActivities(deps),
    ...createReconcileActivities(deps),
    ...createPlanActivities(deps, projects),
    ...createPreviewActivities(deps),
    ...createAdmissionActivities(deps),
    ...createWebhookActivities(deps),
    ...createPrLoopActivities(deps),
    ...createRunWorkflowActivities(deps),
  });
}

export type Activities = ReturnType<typeof createActivities>;
