// Project operations as short workflows: each runs its git work as an activity (so a worker crash
// mid-clone is retried, not lost) and keeps the project's trigger schedules in step.
import { ParentClosePolicy, startChild } from '@temporalio/workflow';
import type { ProjectRecord } from '../activities/read-model/project-store.ts';
import type { TriggerScheduleSync } from '../activities/triggers/schedules.ts';
import { runSearchAttributes } from '../core/search-attributes.ts';
import { projectGit, projectSetup } from './activity-proxies.ts';
import { runWorkflow } from './run/run.workflow.ts';

export interface RegisterProjectInput {
  projectId: string;
  gitUrl: string;
  cloneUrl: string;
  owner: string;
  name: string;
  defaultBranch: string | null;
}

export async function registerProjectWorkflow(
  input: RegisterProjectInput,
): Promise<{ project: ProjectRecord; triggers: TriggerScheduleSync }> {
  const project = await projectGit.registerProjectClone(input);
  const triggers = await projectSetup.syncProjectTriggers({ projectId: project.id });
  return { project, triggers };
}

export async function refreshProjectWorkflow(input: {
  projectId: string;
  ref: string | null;
}): Promise<{ project: ProjectRecord; headSha: string; ref: string; triggers: TriggerScheduleSync }> {
  const refreshed = await projectGit.refreshProjectClone(input);
  const triggers = await projectSetup.syncProjectTriggers({ projectId: input.projectId });
  return { ...refreshed, triggers };
}

export async function deleteProjectWorkflow(input: { projectId: string }): Promise<ProjectRecord | null> {
  await projectSetup.syncProjectTriggers({ projectId: input.projectId, removeAll: true });
  return projectGit.deleteProject(input);
}

/**
 * Started by a trigger's Temporal Schedule: refreshes the clone (so the trigger and its prompt are
 * current), then starts the run as an abandoned child: the run outlives this short workflow.
 */
export async function triggerFireWorkflow(input: {
  projectId: string;
  triggerId: string;
}): Promise<{ runId: string | null; skipped: string | null }> {
  await projectGit.refreshProjectClone({ projectId: input.projectId, ref: null });
  const prepared = await projectSetup.prepareTriggerRun({ ...input, trigger: 'cron' });
  if (prepared.kind === 'skip') return { runId: null, skipped: prepared.reason };
  await startChild(runWorkflow, {
    workflowId: prepared.input.runId,
    args: [prepared.input],
    parentClosePolicy: ParentClosePolicy.ABANDON,
    typedSearchAttributes: runSearchAttributes(prepared.input),
  });
  return { runId: prepared.input.runId, skipped: null };
}
