// The worker's workflow entry point: every workflow type svc registers.
export { runWorkflow } from './run/run.workflow.ts';
export { pullRequestWorkflow } from './pull-request.workflow.ts';
export { planRunWorkflow } from './plan-run/plan-run.workflow.ts';
export {
  registerProjectWorkflow,
  refreshProjectWorkflow,
  deleteProjectWorkflow,
  triggerFireWorkflow,
} from './project.workflow.ts';
export { reconcileWorkflow } from './reconcile.workflow.ts';
export { healerWorkflow } from './healer.workflow.ts';
export { admissionWorkflow } from './admission.workflow.ts';
export { webhooksWorkflow, webhookDeliveryWorkflow } from './webhooks.workflow.ts';
export { runDiffWorkflow } from './run-diff.workflow.ts';
export { pendingPodsWorkflow } from './pending-pods.workflow.ts';
export { retentionWorkflow } from './retention.workflow.ts';
export { environmentBuildWorkflow } from './environment-build.workflow.ts';
