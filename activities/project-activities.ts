// The I/O behind projects: the clone (under the project lock), the project's read-model rows,
// and the Temporal Schedules that carry its cron triggers.
import { join } from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { newId } from '../core/ids.ts';
import { buildRunInput } from '../core/run-input.ts';
import { triggerRunRequest } from '../core/trigger-run.ts';
import type { RunTiming, RunWorkflowInput } from '../core/run-model.ts';
import { blockingProblem } from '../core/svc-config.ts';
import { ProjectEntity } from '../db/entities/index.ts';
import type { ReadModel } from '../db/orm.ts';
import type { AgentCatalog } from '../platform/agent-catalog.ts';
import { dataPaths } from '../platform/config.ts';
import type { ForgeCredentials } from '../platform/forge-credentials.ts';
import { loadSvcConfigFrom } from '../platform/svc-config-files.ts';
import { cloneProject, ProjectCloneError, refreshClone, removeClone, UnknownRefError } from './git/project-clone.ts';
import { projectLockFile, withProjectLock } from '../platform/project-lock.ts';
import { deleteProjectRows, saveProject, toProjectRecord, type ProjectRecord } from './read-model/project-store.ts';
import { syncTriggerSchedules, type TriggerScheduleSync } from './triggers/schedules.ts';

export interface ProjectActivityDeps {
  readModel: ReadModel;
  dataDir: string;
  projectsRoot: string;
  /** svc's forge token for each repository: the PAT, or an installation token for that repository alone. */
  forgeCredentials: ForgeCredentials;
  temporal: Client;
  taskQueue: string;
  agents: AgentCatalog;
  runBranchPrefix: string;
  /** SVC_MAX_CONCURRENT_RUNS, carried by every run this worker dispatches (null: none). */
  maxConcurrentRuns?: number | null;
  runTiming: RunTiming;
}

/** Failures a retry cannot fix become non-retryable, typed so the API can map them to codes. */
function unavailable(error: unknown): never {
  if (error instanceof ProjectCloneError) throw ApplicationFailure.nonRetryable(error.message, 'project_unavailable');
  if (error instanceof UnknownRefError) throw ApplicationFailure.nonRetryable(error.message, 'ref_not_found');
  throw error;
}

export function createProjectActivities(deps: ProjectActivityDeps) {
  const lockFor = (owner: string, name: string) => projectLockFile(deps.projectsRoot, owner, name);
  const ownerAndName = (localPath: string) => {
    const parts = localPath.split('/');
    return { owner: parts.at(-2)!, name: parts.at(-1)! };
  };
  const loadProject = async (projectId: string) => {
    const row = await deps.readModel.em().findOne(ProjectEntity, { id: projectId });
    if (!row) throw ApplicationFailure.nonRetryable(`project ${projectId} not found`, 'not_found');
    return toProjectRecord(row);
  };

  return {
    async registerProjectClone(input: {
      projectId: string;
      gitUrl: string;
      cloneUrl: string;
      owner: string;
      name: string;
      defaultBranch: string | null;
    }): Promise<ProjectRecord> {
      const localPath = join(deps.projectsRoot, input.owner, input.name);
      const remote = await deps.forgeCredentials.gitRemote(input.owner, input.name);
      const facts = await withProjectLock(lockFor(input.owner, input.name), 'exclusive', () =>
        cloneProject({
          cloneUrl: input.cloneUrl,
          localPath,
          defaultBranch: input.defaultBranch,
          remote,
        }),
      ).catch(unavailable);
      const now = new Date().toISOString();
      return saveProject(deps.readModel.em(), {
        id: input.projectId,
        gitUrl: input.gitUrl,
        localPath: facts.localPath,
        defaultBranch: facts.defaultBranch,
        addedAt: now,
        lastFetchedAt: now,
        lastHeadSha: facts.headSha,
        hasSeeds: facts.hasSeeds,
      });
    },

    async refreshProjectClone(input: {
      projectId: string;
      ref: string | null;
    }): Promise<{ project: ProjectRecord; headSha: string; ref: string }> {
      const project = await loadProject(input.projectId);
      const { owner, name } = ownerAndName(project.localPath);
      const ref = input.ref ?? project.defaultBranch;
      const remote = await deps.forgeCredentials.gitRemote(owner, name);
      const facts = await withProjectLock(lockFor(owner, name), 'exclusive', () =>
        refreshClone({ localPath: project.localPath, ref, remote }),
      ).catch(unavailable);
      const saved = await saveProject(deps.readModel.em(), {
        ...project,
        lastFetchedAt: new Date().toISOString(),
        lastHeadSha: facts.headSha,
        hasSeeds: facts.hasSeeds,
      });
      return { project: saved, headSha: facts.headSha, ref };
    },

    /** Row first (the project disappears from the API at once), then the clone. */
    async deleteProject(input: { projectId: string }): Promise<ProjectRecord | null> {
      const removed = await deleteProjectRows(deps.readModel.em(), input.projectId);
      if (!removed) return null;
      const { owner, name } = ownerAndName(removed.localPath);
      await withProjectLock(lockFor(owner, name), 'exclusive', async () =>
        removeClone(removed.localPath, deps.projectsRoot),
      ).catch(unavailable);
      return removed;
    },

    async syncProjectTriggers(input: { projectId: string; removeAll?: boolean }): Promise<TriggerScheduleSync> {
      const project = input.removeAll
        ? null
        : await deps.readModel.em().findOne(ProjectEntity, { id: input.projectId });
      const triggers = project ? (loadSvcConfigFrom(project.localPath).triggers ?? []) : [];
      return syncTriggerSchedules({
        em: deps.readModel.em(),
        client: deps.temporal,
        taskQueue: deps.taskQueue,
        projectId: input.projectId,
        triggers,
      });
    },

    /** What a cron trigger dispatches now, read from the freshly refreshed clone; or why it cannot. */
    async prepareTriggerRun(input: {
      projectId: string;
      triggerId: string;
      trigger: string;
    }): Promise<{ kind: 'dispatch'; input: RunWorkflowInput } | { kind: 'skip'; reason: string }> {
      const project = await loadProject(input.projectId);
      const config = loadSvcConfigFrom(project.localPath);
      const problem = blockingProblem(config);
      if (problem) return { kind: 'skip', reason: `${problem.file}: ${problem.message}` };
      const trigger = config.triggers?.find((entry) => entry.id === input.triggerId);
      if (!trigger) return { kind: 'skip', reason: `trigger "${input.triggerId}" is no longer in .svc/triggers.yaml` };
      let agent;
      try {
        agent = deps.agents.withProjectAgents(project.localPath).get(trigger.role);
      } catch (error) {
        return { kind: 'skip', reason: (error as Error).message };
      }
      if (!agent) return { kind: 'skip', reason: `agent "${trigger.role}" is unknown` };
      const request = triggerRunRequest({
        trigger,
        defaults: config.defaults,
        project,
        agent,
        label: input.trigger,
        runBranchPrefix: deps.runBranchPrefix,
      });
      if ('problem' in request) return { kind: 'skip', reason: request.problem };
      return {
        kind: 'dispatch',
        input: buildRunInput(
          {
            ...request,
            runId: newId('run'),
            createdAt: Date.now(),
            timing: deps.runTiming,
            instanceMaxConcurrentRuns: deps.maxConcurrentRuns ?? null,
          },
          dataPaths.workspaces(deps.dataDir),
        ),
      };
    },
  };
}

export type ProjectActivities = ReturnType<typeof createProjectActivities>;
