// The API's reads of the plan-run projection (plan_runs and plan_run_children): the services ask
// questions ("this plan-run", "its children", "how many are active") and the SQL lives here.
// Writes are the activities' (activities/read-model/).
import type { PlanRunState } from '../../core/run-states.ts';
import { PlanRunChildEntity, PlanRunEntity, type PlanRun, type PlanRunChild } from '../entities/index.ts';
import type { ReadModel } from '../orm.ts';

/** Which plan-runs a list shows: a project's, a state's, or (a spectator's view) only those of some projects. */
export interface PlanRunFilter {
  projectId?: string;
  /** One state, or `active`: queued or running. */
  state?: PlanRunState | 'active';
  /** Limits the list to these projects (a spectator's visible ones). */
  onlyProjects?: Set<string>;
}

const ACTIVE_STATES: PlanRunState[] = ['queued', 'running'];

/** How many plan-runs a list holds at most. */
export const PLAN_RUN_LIST_LIMIT = 500;

/** The plan-run queries of the API: one named method per question, each on a fresh entity manager. */
export class PlanRunsRepository {
  readonly #readModel: ReadModel;

  constructor(readModel: ReadModel) {
    this.#readModel = readModel;
  }

  /** The plan-run's row, or null before its first projection (or when there is no such plan-run). */
  find(id: string): Promise<PlanRun | null> {
    return this.#readModel.em().findOne(PlanRunEntity, { id });
  }

  /** Only the plan-run's state (null when there is no row). */
  async stateOf(id: string): Promise<PlanRunState | null> {
    return (await this.#readModel.em().findOne(PlanRunEntity, { id }, { fields: ['state'] }))?.state ?? null;
  }

  /** When the projected execution was resumed (null when never, or when there is no row). */
  async resumedAt(id: string): Promise<Date | null> {
    return (await this.#readModel.em().findOne(PlanRunEntity, { id }, { fields: ['resumedAt'] }))?.resumedAt ?? null;
  }

  /** The newest plan-runs that match, newest first, at most PLAN_RUN_LIST_LIMIT of them. */
  list(filter: PlanRunFilter): Promise<PlanRun[]> {
    const { projectId, state, onlyProjects } = filter;
    const projects = onlyProjects ? [...onlyProjects].filter((id) => !projectId || id === projectId) : undefined;
    const projectWhere = projects ? { projectId: { $in: projects } } : projectId ? { projectId } : {};
    const stateWhere = state === 'active' ? { state: { $in: ACTIVE_STATES } } : state ? { state } : {};
    return this.#readModel
      .em()
      .find(
        PlanRunEntity,
        { ...projectWhere, ...stateWhere },
        { orderBy: { createdAt: 'desc', id: 'desc' }, limit: PLAN_RUN_LIST_LIMIT },
      );
  }

  /** Plan-runs of the project that are queued or running. */
  countActive(projectId: string): Promise<number> {
    return this.#readModel.em().count(PlanRunEntity, { projectId, state: { $in: ACTIVE_STATES } });
  }

  /** The ids of the plans the project's plan-runs were made from (issue-list plan-runs have none). */
  async dispatchedPlanIds(projectId: string): Promise<Set<string>> {
    const rows = await this.#readModel
      .em()
      .find(PlanRunEntity, { projectId, planId: { $ne: null } }, { fields: ['planId'] });
    return new Set(rows.map((row) => row.planId!));
  }

  /** The plan-run's children, in plan order. */
  children(planRunId: string): Promise<PlanRunChild[]> {
    return this.#readModel.em().find(PlanRunChildEntity, { planRunId }, { orderBy: { seq: 'asc' } });
  }

  /** The distinct runs dispatched for the plan-run's children so far. */
  async childRunIds(planRunId: string): Promise<string[]> {
    const children = await this.#readModel
      .em()
      .find(PlanRunChildEntity, { planRunId, runId: { $ne: null } }, { fields: ['runId'] });
    return [...new Set(children.map((child) => child.runId!))];
  }
}
