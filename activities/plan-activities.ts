// The I/O of a plan-run: its projection, picking up a child's seed from a fresh clone and turning
// it into a run's input, and looking at a child run the plan-run no longer parents.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { AgentDefinition } from '../core/agents.ts';
import { newId } from '../core/ids.ts';
import {
  childProgressOf,
  renderPlanPrompt,
  type ChildRunProgress,
  type PlanChildSettings,
  type PlanRunSnapshot,
} from '../core/plan-model.ts';
import { buildRunInput, projectRunSettings } from '../core/run-input.ts';
import type { RunTiming, RunWorkflowInput } from '../core/run-model.ts';
import { parseIssues } from '../core/seeds.ts';
import type { ReadModel } from '../db/orm.ts';
import { dataPaths } from '../platform/config.ts';
import { loadSvcConfigFrom } from '../platform/svc-config-files.ts';
import { pullRequestWorkflowId } from '../core/run-workflows.ts';
import { runSnapshotQuery } from '../workflows/messages.ts';
import { projectPlanRun, type PlanEventInput } from './read-model/plan-run-projection.ts';
import type { ProjectActivities } from './project-activities.ts';

export interface PlanActivityDeps {
  readModel: ReadModel;
  dataDir: string;
  temporal: Client;
  runBranchPrefix: string;
  /** SVC_MAX_CONCURRENT_RUNS, carried by every run this worker dispatches (null: none). */
  maxConcurrentRuns?: number | null;
}

export interface PlanChildRequest extends PlanChildSettings {
  planRunId: string;
  seq: number;
  projectId: string;
  seedId: string;
  agent: AgentDefinition;
  runTiming: RunTiming;
  /** The plan the plan-run walks (null for an `issues` list); absent in older histories. */
  planId?: string | null;
}

export type PlanChildPlan = { kind: 'missing' } | { kind: 'closed' } | { kind: 'dispatch'; input: RunWorkflowInput };

export function createPlanActivities(deps: PlanActivityDeps, projects: Pick<ProjectActivities, 'refreshProjectClone'>) {
  return {
    async projectPlanRun({ snapshot, events }: { snapshot: PlanRunSnapshot; events: PlanEventInput[] }): Promise<void> {
      await projectPlanRun(deps.readModel.em(), snapshot, events);
    },

    /**
     * The child's seed as the default branch has it now (earlier children's merges may have closed
     * it), and, when it is still open, the input of its run with the prompt rendered. The run id is
     * made here, so the workflow's history holds it and a replay starts the same run.
     */
    async preparePlanChild(request: PlanChildRequest): Promise<PlanChildPlan> {
      const { project } = await projects.refreshProjectClone({ projectId: request.projectId, ref: null });
      const issuesFile = join(project.localPath, '.seeds', 'issues.jsonl');
      const seed = existsSync(issuesFile)
        ? parseIssues(readFileSync(issuesFile, 'utf8')).records.get(request.seedId)
        : undefined;
      if (!seed) return { kind: 'missing' };
      if (seed.status === 'closed') return { kind: 'closed' };
      const config = loadSvcConfigFrom(project.localPath);
      const input = buildRunInput(
        {
          runId: newId('run'),
          createdAt: Date.now(),
          agent: request.agent,
          projectId: request.projectId,
          prompt: renderPlanPrompt(request.promptTemplate, seed),
          trigger: 'plan-run',
          seedId: seed.id,
          ref: request.ref,
          dispatcherHandle: request.dispatcherHandle,
          providerOverride: request.providerOverride,
          modelOverride: request.modelOverride,
          maxCostUsd: request.maxCostUsd,
          ...projectRunSettings(config.defaults, project.defaultBranch, deps.runBranchPrefix),
          timing: request.runTiming,
          instanceMaxConcurrentRuns: deps.maxConcurrentRuns ?? null,
          planRun: { planRunId: request.planRunId, seq: request.seq },
          // The reference's labels on a plan child.
          metadata: { planRunId: request.planRunId, planId: request.planId ?? null, childSeq: request.seq },
        },
        dataPaths.workspaces(deps.dataDir),
      );
      return { kind: 'dispatch', input };
    },

    /**
     * A child run as its workflows hold it now (for a resumed plan-run, whose children it did not
     * start): the workflow following its PR, which knows of a merge, else the run's own.
     */
    async describeRun({ runId }: { runId: string }): Promise<Omit<ChildRunProgress, 'planRunId' | 'seq'>> {
      const notFound = (error: unknown) => (error as Error).name === 'WorkflowNotFoundError';
      try {
        return childProgressOf(
          await deps.temporal.workflow.getHandle(pullRequestWorkflowId(runId)).query(runSnapshotQuery),
        );
      } catch (error) {
        if (!notFound(error)) throw error;
      }
      try {
        return childProgressOf(await deps.temporal.workflow.getHandle(runId).query(runSnapshotQuery));
      } catch (error) {
        if (notFound(error)) throw ApplicationFailure.nonRetryable(`run ${runId} has no workflow`, 'not_found');
        throw error;
      }
    },
  };
}

export type PlanActivities = ReturnType<typeof createPlanActivities>;
