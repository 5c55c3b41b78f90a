// Plan-run use-cases. Creation checks everything in the documented order and writes nothing until
// every check has passed; then planRunWorkflow (workflow id = plan-run id) owns the plan-run and
// projects it. Reads come from the read model, falling back to the workflow before its first
// projection.
import { isId, newId } from '../../core/ids.ts';
import {
  DEFAULT_PROMPT_TEMPLATE,
  initialPlanRunSnapshot,
  isTerminalPlanRunState,
  type PlanRunWorkflowInput,
  type PlanTiming,
} from '../../core/plan-model.ts';
import type { RunTiming } from '../../core/run-model.ts';
import type { AgentCatalog } from '../../platform/agent-catalog.ts';
import type { PlanRunsRepository } from '../../db/repositories/plan-runs.repository.ts';
import type { RunsRepository } from '../../db/repositories/runs.repository.ts';
import { Errors } from '../errors.ts';
import { resolveAgent } from './agent-resolver.ts';
import { presentPlanRun, presentPlanRunChild } from '../presenters/plan-run.presenter.ts';
import type { CreatePlanRunBody, ListPlanRunsQuery } from '../routes/plan-runs.schema.ts';
import type { PlanRunWorkflows } from './plan-run-workflows.ts';
import type { ProjectsService } from './projects.service.ts';

export interface PlanRunsServiceDeps {
  planRunRows: PlanRunsRepository;
  runRows: RunsRepository;
  workflows: PlanRunWorkflows;
  projects: ProjectsService;
  agents: AgentCatalog;
  planTiming: PlanTiming;
  runTiming: RunTiming;
}

/** Plan statuses a plan-run may be made from. */
const DISPATCHABLE_PLAN_STATUSES = ['approved', 'active', 'done'];

export class PlanRunsService {
  readonly #deps: PlanRunsServiceDeps;

  constructor(deps: PlanRunsServiceDeps) {
    this.#deps = deps;
  }

  async create(body: CreatePlanRunBody) {
    const project = await this.#deps.projects.get(body.project);
    const promptTemplate = body.promptTemplate ?? DEFAULT_PROMPT_TEMPLATE;
    if (!promptTemplate.includes('{seed_id}'))
      throw Errors.validation('promptTemplate must contain {seed_id}', `e.g. "${DEFAULT_PROMPT_TEMPLATE}"`);
    if (!project.hasSeeds) throw Errors.projectLacksSeeds(project.id);
    // Walk the plan on a fresh clone: what the forge has now, not what was fetched last.
    await this.#deps.projects.refresh(project.id, null);
    const { issues, plans } = await this.#deps.projects.tracker(project.id);
    let seedIds: string[];
    if (body.planId !== undefined) {
      const plan = plans.get(body.planId);
      if (!plan)
        throw Errors.validation(
          `plan "${body.planId}" is not in .seeds/plans.jsonl`,
          'GET /projects/{id}/seeds/plans lists the plans',
        );
      if (!DISPATCHABLE_PLAN_STATUSES.includes(plan.status))
        throw Errors.validation(
          `plan "${plan.id}" is ${plan.status}`,
          `a plan-run needs a plan that is ${DISPATCHABLE_PLAN_STATUSES.join(', ')}`,
        );
      seedIds = plan.children;
    } else {
      const unknown = body.issues!.filter((id) => !issues.has(id));
      if (unknown.length)
        throw Errors.validation(
          `unknown issue${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`,
          'issue ids are the ids in .seeds/issues.jsonl',
        );
      seedIds = body.issues!;
    }
    if (!seedIds.some((id) => issues.get(id)?.status !== 'closed')) throw Errors.planHasNoOpenChildren();
    const agent = this.#agent(body.agent, project.localPath);
    const input: PlanRunWorkflowInput = {
      planRunId: newId('planRun'),
      createdAt: new Date().toISOString(),
      planId: body.planId ?? null,
      source: body.planId !== undefined ? 'plan' : 'issues',
      projectId: project.id,
      agent,
      promptTemplate,
      ref: body.ref ?? null,
      providerOverride: body.providerOverride ?? null,
      modelOverride: body.modelOverride ?? null,
      maxCostUsd: body.maxCostUsd ?? null,
      dispatcherHandle: body.dispatcherHandle ?? 'operator',
      trigger: 'manual',
      seedIds,
      timing: this.#deps.planTiming,
      runTiming: this.#deps.runTiming,
    };
    const planRun = await this.#deps.workflows.start(input);
    return {
      planRun: presentPlanRun(planRun),
      children: planRun.children.map((child) => presentPlanRunChild({ ...child, planRunId: planRun.id })),
    };
  }

  #agent(name: string, projectDir: string) {
    return resolveAgent(this.#deps.agents, name, projectDir);
  }

  /** onlyProjects: a spectator's view, limited to the projects it may see. */
  async list(query: ListPlanRunsQuery, onlyProjects?: Set<string>) {
    const rows = await this.#deps.planRunRows.list({ projectId: query.project, state: query.state, onlyProjects });
    return { planRuns: rows.map(presentPlanRun) };
  }

  /** The plan-run, its children and their runs. */
  async get(id: string) {
    const row = await this.#deps.planRunRows.find(id);
    if (!row) {
      const accepted = isId('planRun', id) ? await this.#deps.workflows.input(id) : undefined;
      if (!accepted) throw Errors.notFound(`plan-run "${id}"`);
      const snapshot = initialPlanRunSnapshot(accepted);
      return {
        planRun: presentPlanRun(snapshot),
        children: snapshot.children.map((child) => presentPlanRunChild({ ...child, planRunId: id })),
        runs: [],
      };
    }
    const children = await this.#deps.planRunRows.children(id);
    const runIds = children.map((child) => child.runId).filter((runId): runId is string => runId !== null);
    const runs = await this.#deps.runRows.byIds(runIds);
    return { planRun: presentPlanRun(row), children: children.map(presentPlanRunChild), runs };
  }

  async cancel(id: string, reason: string | null) {
    const current = await this.get(id);
    // Nothing cancelled is `{}`, never null: the interface's shape for every answer.
    if (isTerminalPlanRunState(current.planRun.state))
      return { planRun: current.planRun, cancelledChild: {}, alreadyTerminal: true };
    const outcome = await this.#deps.workflows.cancel(id, { reason, requestedBy: 'operator' });
    const after = await this.get(id);
    if (outcome === 'closed') return { planRun: after.planRun, cancelledChild: {}, alreadyTerminal: true };
    // The workflow's answer is the truth; the row may trail it by a moment.
    const planRun = outcome
      ? { ...after.planRun, state: outcome.state, failureReason: outcome.failureReason }
      : after.planRun;
    // A history of an earlier release may still close with null.
    return { planRun, cancelledChild: outcome?.cancelledChild ?? {}, alreadyTerminal: false };
  }

  /**
   * Waits (bounded) until the resumed execution's first projection is readable, so a GET after the
   * answer agrees with it.
   */
  async #projected(id: string, resumedAt: string, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const projectedResumedAt = await this.#deps.planRunRows.resumedAt(id);
      if (projectedResumedAt && projectedResumedAt.getTime() === Date.parse(resumedAt)) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Resumes a failed or cancelled plan-run; `reason` in the answer is the failure it resumes from. */
  async resume(id: string, note: string | undefined) {
    await this.get(id);
    const { planRun, resumedChild, reason } = await this.#deps.workflows.resume(id, note ?? null);
    await this.#projected(id, planRun.resumedAt!);
    return {
      planRun: presentPlanRun(planRun),
      resumedChild: resumedChild ? { seq: resumedChild.seq, runId: resumedChild.runId } : null,
      reason,
    };
  }
}
