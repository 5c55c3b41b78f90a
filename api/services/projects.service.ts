// Project use-cases: registration, refresh and deletion go through Temporal workflows (the git
// work runs in activities); reads come from the read model and, for seeds and `.svc/` files, from
// the project's clone under its shared lock.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectLockFile, withProjectLock } from '../../platform/project-lock.ts';
import { ENVIRONMENT_FILE, parseEnvironment } from '../../core/environment.ts';
import { parseGitHubUrl } from '../../core/git-url.ts';
import { newId } from '../../core/ids.ts';
import { parseIssues, parsePlans, readyPlans, type Plan } from '../../core/seeds.ts';
import type { Project } from '../../db/entities/index.ts';
import type { PlanRunsRepository } from '../../db/repositories/plan-runs.repository.ts';
import type { ProjectsRepository } from '../../db/repositories/projects.repository.ts';
import type { RunsRepository } from '../../db/repositories/runs.repository.ts';
import type { AgentCatalog } from '../../platform/agent-catalog.ts';
import {
  loadSvcConfigFrom,
  migrateSvcConfig,
  scaffoldSvcConfig,
  SvcConfigFileError,
} from '../../platform/svc-config-files.ts';
import { ApiError, Errors } from '../errors.ts';
import { iso } from '../presenters/run.presenter.ts';
import { TemporalGateway } from './temporal-gateway.ts';

export interface ProjectsServiceDeps {
  projectRows: ProjectsRepository;
  runRows: RunsRepository;
  planRunRows: PlanRunsRepository;
  temporal: TemporalGateway;
  agents: AgentCatalog;
  projectsRoot: string;
}

export class ProjectsService {
  readonly #deps: ProjectsServiceDeps;

  constructor(deps: ProjectsServiceDeps) {
    this.#deps = deps;
  }

  async list(): Promise<Project[]> {
    return this.#deps.projectRows.all();
  }

  async get(id: string): Promise<Project> {
    const project = await this.#deps.projectRows.find(id);
    if (!project) throw Errors.notFound(`project "${id}"`, 'GET /projects lists registered projects');
    return project;
  }

  async register(gitUrl: string, defaultBranch: string | null) {
    const parsed = parseGitHubUrl(gitUrl);
    if (!parsed.ok) throw Errors.validation(parsed.message, parsed.hint);
    const { repo } = parsed;
    const existing = await this.#deps.projectRows.findByGitUrl(repo.canonicalUrl);
    if (existing) throw Errors.validation(`project already exists: ${existing.id}`, `GET /projects/${existing.id}`);
    const projectId = newId('project');
    // One registration per repository at a time: the workflow id is the repository's name.
    const workflowId = `project-register-${repo.owner.toLowerCase()}-${repo.name.toLowerCase()}`;
    try {
      return await this.#deps.temporal.executeProjectWorkflow(
        'registerProjectWorkflow',
        workflowId,
        {
          projectId,
          gitUrl: repo.canonicalUrl,
          cloneUrl: repo.cloneUrl,
          owner: repo.owner,
          name: repo.name,
          defaultBranch,
        },
        projectId,
      );
    } catch (error) {
      if (error instanceof ApiError && error.code === 'state_transition_error')
        throw Errors.validation(
          `${repo.canonicalUrl} is being registered right now`,
          'GET /projects shows it once the clone is done',
        );
      throw error;
    }
  }

  async refresh(id: string, ref: string | null) {
    await this.get(id);
    return this.#deps.temporal.executeProjectWorkflow(
      'refreshProjectWorkflow',
      TemporalGateway.operationId('refresh', id),
      { projectId: id, ref },
      id,
    );
  }

  /**
   * 409 while the project has a run or plan-run that is not terminal: its clone is what they push
   * from (docs/projects.md). Cancel them, or let them finish, then delete.
   */
  async remove(id: string) {
    await this.get(id);
    const runs = await this.#deps.runRows.countActive(id);
    const plans = await this.#deps.planRunRows.countActive(id);
    if (runs + plans > 0)
      throw Errors.conflict(
        `project ${id} has ${runs} active run(s) and ${plans} active plan-run(s)`,
        'cancel them (or let them finish), then delete the project',
      );
    const removed = await this.#deps.temporal.executeProjectWorkflow(
      'deleteProjectWorkflow',
      TemporalGateway.operationId('delete', id),
      { projectId: id },
      id,
    );
    if (!removed) throw Errors.notFound(`project "${id}"`);
    return removed;
  }

  /** Reads files of the clone while no refresh can rewrite them. */
  async #readClone<T>(project: Project, read: () => T): Promise<T> {
    const [owner, name] = project.localPath.split('/').slice(-2) as [string, string];
    return withProjectLock(projectLockFile(this.#deps.projectsRoot, owner, name), 'shared', async () => read());
  }

  async #trackerFiles(id: string): Promise<{ project: Project; issues: string; plans: string }> {
    const project = await this.get(id);
    const seedsDir = join(project.localPath, '.seeds');
    if (!existsSync(seedsDir)) throw Errors.projectLacksSeeds(id);
    const read = (file: string) => (existsSync(join(seedsDir, file)) ? readFileSync(join(seedsDir, file), 'utf8') : '');
    return this.#readClone(project, () => ({ project, issues: read('issues.jsonl'), plans: read('plans.jsonl') }));
  }

  /** The project's seeds and plans, parsed (400 project_lacks_seeds without a tracker). */
  async tracker(id: string) {
    const { project, issues, plans } = await this.#trackerFiles(id);
    return { project, issues: parseIssues(issues).records, plans: parsePlans(plans).records };
  }

  async seed(id: string, seedId: string) {
    const { issues } = await this.#trackerFiles(id);
    const seed = parseIssues(issues).records.get(seedId);
    if (!seed) throw Errors.notFound(`seed "${seedId}"`, 'seed ids are the ids in .seeds/issues.jsonl');
    return { id: seed.id, title: seed.title, status: seed.rawStatus, blockedBy: seed.blockedBy };
  }

  async plans(id: string) {
    const { plans } = await this.#trackerFiles(id);
    return [...parsePlans(plans).records.values()].map(summarisePlan);
  }

  async readyPlans(id: string) {
    const { issues, plans } = await this.#trackerFiles(id);
    const dispatched = await this.#deps.planRunRows.dispatchedPlanIds(id);
    return readyPlans(parsePlans(plans).records, parseIssues(issues).records, dispatched);
  }

  async svcConfig(id: string) {
    const project = await this.get(id);
    try {
      return await this.#readClone(project, () => {
        const config = loadSvcConfigFrom(project.localPath);
        // The environment file is read at each run's start; a problem in it is the project's to see here too.
        const path = join(project.localPath, ENVIRONMENT_FILE);
        const environment = existsSync(path) ? parseEnvironment(readFileSync(path, 'utf8')) : null;
        if (!environment || !('invalid' in environment)) return config;
        const message = environment.invalid.replace(`${ENVIRONMENT_FILE}: `, '');
        return {
          ...config,
          errors: [...config.errors, { file: ENVIRONMENT_FILE, code: 'svc_config_schema_error' as const, message }],
        };
      });
    } catch (error) {
      if (error instanceof SvcConfigFileError) throw Errors.svcConfigUnavailable(error.message);
      throw error;
    }
  }

  /** Whether the project's config lets spectators read its prompts; a config that cannot be read says no. */
  async showsPromptsToSpectators(id: string): Promise<boolean> {
    const project = await this.#deps.projectRows.find(id);
    if (!project) return false;
    try {
      return (
        (await this.#readClone(project, () => loadSvcConfigFrom(project.localPath))).defaults?.spectators
          ?.showPrompts === true
      );
    } catch {
      return false;
    }
  }

  async triggers(id: string) {
    const config = await this.svcConfig(id);
    const rows = await this.#deps.projectRows.triggers(id);
    const triggers = await Promise.all(
      (config.triggers ?? []).map(async (trigger) => {
        const row = rows.find((candidate) => candidate.triggerId === trigger.id);
        const nextFire = row && !row.scheduleError ? await this.#deps.temporal.nextScheduledFire(row.scheduleId) : null;
        return {
          id: trigger.id,
          kind: trigger.kind,
          cron: trigger.cron,
          seed: trigger.seed ?? null,
          role: trigger.role,
          ...(trigger.timezone ? { timezone: trigger.timezone } : {}),
          ...(trigger.prompt ? { prompt: trigger.prompt } : {}),
          lastFiredAt: iso(row?.lastFiredAt),
          nextFireAt: iso(nextFire),
          lastRunId: row?.lastRunId ?? null,
          parseError: row ? (row.scheduleError ?? null) : 'not scheduled yet: refresh the project',
        };
      }),
    );
    return { triggers, errors: config.errors.filter((problem) => problem.file.endsWith('triggers.yaml')) };
  }

  async init(id: string, defaultRole: string | null) {
    const project = await this.get(id);
    const agents = this.#deps.agents.list();
    if (defaultRole && !this.#deps.agents.get(defaultRole))
      throw Errors.notFound(`agent "${defaultRole}"`, 'GET /agents (svc agents) lists the agents this server knows');
    const role = defaultRole ?? (agents.length === 1 ? agents[0]!.name : null);
    const files = await this.#writeConfig(project, () => scaffoldSvcConfig(project.localPath, role ?? undefined));
    return { files, defaultRole: role };
  }

  async migrateConfig(id: string) {
    const project = await this.get(id);
    return { files: await this.#writeConfig(project, () => migrateSvcConfig(project.localPath)) };
  }

  async #writeConfig(project: Project, write: () => string[]): Promise<string[]> {
    const [owner, name] = project.localPath.split('/').slice(-2) as [string, string];
    try {
      return await withProjectLock(projectLockFile(this.#deps.projectsRoot, owner, name), 'exclusive', async () =>
        write(),
      );
    } catch (error) {
      if (error instanceof SvcConfigFileError)
        throw error.code === 'unreadable'
          ? Errors.svcConfigUnavailable(error.message)
          : Errors.validation(error.message);
      throw error;
    }
  }
}

function summarisePlan(plan: Plan) {
  return {
    id: plan.id,
    status: plan.status,
    ...(plan.seed ? { seed: plan.seed } : {}),
    ...(plan.template ? { template: plan.template } : {}),
    ...(plan.revision !== undefined ? { revision: plan.revision } : {}),
    ...(plan.name ? { name: plan.name } : {}),
    childCount: plan.children.length,
    ...(plan.createdAt ? { createdAt: plan.createdAt } : {}),
    ...(plan.updatedAt ? { updatedAt: plan.updatedAt } : {}),
  };
}
