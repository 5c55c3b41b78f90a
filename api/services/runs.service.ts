// Run use-cases behind the routes: dispatch (validate references, then start the workflow) and
// reads from the read model.
import { agentSteering } from '../../core/agent-capabilities.ts';
import type { AgentDefinition } from '../../core/agents.ts';
import { createHash } from 'node:crypto';
import { idempotentId, isId, newId } from '../../core/ids.ts';
import { buildRunInput, projectRunSettings, type RunRequest } from '../../core/run-input.ts';
import type { RunSnapshot, RunTiming } from '../../core/run-model.ts';
import { isTerminalRunState, type InboxPriority } from '../../core/run-states.ts';
import { capRaiseProblem } from '../../core/cost-pause.ts';
import { presentInboxItem, type NewInboxItem } from '../../core/inbox.ts';
import { blockingProblem } from '../../core/svc-config.ts';
import { triggerRunRequest } from '../../core/trigger-run.ts';
import type { Project, Run } from '../../db/entities/index.ts';
import type { RunsRepository } from '../../db/repositories/runs.repository.ts';
import type { ProjectsRepository } from '../../db/repositories/projects.repository.ts';
import type { AgentCatalog } from '../../platform/agent-catalog.ts';
import { dataPaths } from '../../platform/config.ts';
import { loadSvcConfigFrom } from '../../platform/svc-config-files.ts';
import { Errors } from '../errors.ts';
import { resolveAgent } from './agent-resolver.ts';
import type { DispatchRunBody, ListRunsQuery } from '../routes/runs.schema.ts';
import type { ProjectsService } from './projects.service.ts';
import type { TemporalGateway } from './temporal-gateway.ts';
import type { Admission } from './admission.ts';

export interface RunsServiceDeps {
  projectRows: ProjectsRepository;
  runRows: RunsRepository;
  temporal: TemporalGateway;
  agents: AgentCatalog;
  projects: ProjectsService;
  dataDir: string;
  runBranchPrefix: string;
  /** SVC_MAX_CONCURRENT_RUNS: carried by every run, which waits for a slot past it (null: none). */
  maxConcurrentRuns: number | null;
  runTiming: RunTiming;
  /** The cluster's capacity caps, checked before a run is accepted (429 runtime_admission_rejected). */
  admission?: Admission;
}

type Dispatched = { run: Run | RunSnapshot; sandbox: { id: string; workspacePath: string }; existing: boolean };

/** A request's fingerprint (its members in a fixed order): the same Idempotency-Key must repeat the same one. */
function requestDigest(body: unknown): string {
  const canonical = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(canonical)
      : value && typeof value === 'object'
        ? Object.fromEntries(
            Object.entries(value)
              .sort(([a], [b]) => a.localeCompare(b))
              .map(([key, inner]) => [key, canonical(inner)]),
          )
        : value;
  return createHash('sha256')
    .update(JSON.stringify(canonical(body)))
    .digest('hex');
}

/** A run id derived from an idempotency key: the same key (for the same project) names the same run. */
export function idempotentRunId(key: string, projectId: string | null): string {
  return idempotentId('run', key, projectId ?? '');
}

/**
 * The runs an operator sees and steers: dispatch (POST /runs, trigger runs), reads, cancel, steer
 * (the sandbox's own callbacks are SandboxCallbacksService). Reads come from the read model (or, before the first
 * projection, from the workflow); every change goes to the run's workflow through the gateway.
 */
export class RunsService {
  readonly #deps: RunsServiceDeps;

  constructor(deps: RunsServiceDeps) {
    this.#deps = deps;
  }

  #agent(name: string, projectDir?: string): AgentDefinition {
    return resolveAgent(this.#deps.agents, name, projectDir);
  }

  /** The project's policy: a broken config.yaml blocks dispatch (422). */
  #projectDefaults(project: Pick<Project, 'localPath'>) {
    const config = loadSvcConfigFrom(project.localPath);
    const problem = blockingProblem(config);
    if (problem) throw Errors.svcConfigInvalid(problem.file, problem.message);
    return config;
  }

  async #start(
    request: Omit<RunRequest, 'runId' | 'createdAt'>,
    idempotencyKey?: string,
    requestDigest?: string,
  ): Promise<Dispatched> {
    const runId = idempotencyKey ? idempotentRunId(idempotencyKey, request.projectId) : newId('run');
    // A repeated request for a run already accepted answers it, whatever the caps say now.
    if (!(idempotencyKey && (await this.#deps.runRows.find(runId)))) {
      this.#deps.admission?.checkPodSettings(request.project?.pod);
      this.#deps.admission?.checkAgentImage(request.project?.image);
      this.#deps.admission?.checkDiskSpace();
      await this.#deps.admission?.check();
    }
    const input = buildRunInput(
      {
        timing: this.#deps.runTiming,
        ...request,
        runId,
        createdAt: Date.now(),
        instanceMaxConcurrentRuns: this.#deps.maxConcurrentRuns,
      },
      dataPaths.workspaces(this.#deps.dataDir),
    );
    const { run, existing } = await this.#deps.temporal.startRun(input, {
      idempotent: idempotencyKey !== undefined,
      requestDigest,
    });
    if (!existing) return { run, sandbox: input.sandbox, existing };
    // A repeated request answers the run as it is now, not as it was first accepted.
    const current = await this.get(run.id);
    return { run: current, sandbox: { id: run.sandboxId!, workspacePath: run.workspacePath! }, existing };
  }

  /**
   * continueFromRunId (alias parentRunId): a new run cut from the parent's pushed branch.
   * cloneFromRunId: the parent's agent, project, prompt and overrides again, from the default base;
   * explicit fields override. continue wins when both are given.
   */
  async #withParent(body: DispatchRunBody): Promise<{ body: DispatchRunBody; parent: RunRequest['parent'] }> {
    const continueFrom = body.continueFromRunId ?? body.parentRunId ?? null;
    const parentId = continueFrom ?? body.cloneFromRunId ?? null;
    if (!parentId) return { body, parent: null };
    const row = await this.#deps.runRows.find(parentId);
    if (!row) throw Errors.notFound(`parent run "${parentId}"`);
    if (continueFrom) {
      if (!row.branch || !row.commitsAhead)
        throw Errors.validation(
          `run ${parentId} pushed no branch to continue from`,
          'continue from a run that succeeded with commits',
        );
      return {
        body: { ...body, project: body.project ?? row.projectId },
        parent: { runId: parentId, cloneKind: 'continue', branch: row.branch },
      };
    }
    const agent = row.renderedAgentJson as { name?: string; maxCostUsd?: number | null } | null;
    return {
      body: {
        ...body,
        agent: body.agent ?? row.agentName,
        project: body.project === undefined ? row.projectId : body.project,
        prompt: body.prompt ?? row.prompt,
        providerOverride: body.providerOverride ?? row.provider,
        modelOverride: body.modelOverride ?? row.model,
        maxCostUsd:
          body.maxCostUsd ??
          (row.maxCostUsd === null || row.maxCostUsd === undefined
            ? (agent?.maxCostUsd ?? null)
            : Number(row.maxCostUsd)),
      },
      parent: { runId: parentId, cloneKind: 'replicate', branch: null },
    };
  }

  async dispatch(requested: DispatchRunBody, idempotencyKey?: string): Promise<Dispatched> {
    const { body, parent } = await this.#withParent(requested);
    const projectId = body.project ?? null;
    if (body.baseCommit && !projectId)
      throw Errors.validation(
        'baseCommit needs a project: a run without one has no repository to start from',
        'add "project", or leave out "baseCommit"',
      );
    let settings: Pick<RunRequest, 'project' | 'projectMaxCostUsd' | 'projectOnCapHit'> = {
      project: null,
      projectMaxCostUsd: null,
    };
    let projectDir: string | undefined;
    if (projectId) {
      const row = await this.#deps.projectRows.find(projectId);
      if (!row) throw Errors.notFound(`project "${projectId}"`, 'GET /projects lists registered projects');
      projectDir = row.localPath;
      const { defaults } = this.#projectDefaults(row);
      settings = projectRunSettings(defaults, row.defaultBranch, this.#deps.runBranchPrefix);
    }
    const agent = this.#agent(body.agent!, projectDir);
    const {
      project: _projectId,
      continueFromRunId: _continue,
      parentRunId: _parent,
      cloneFromRunId: _clone,
      ...overrides
    } = body;
    return this.#start(
      { ...overrides, prompt: body.prompt!, agent, projectId, trigger: body.trigger ?? 'manual', ...settings, parent },
      idempotencyKey,
      idempotencyKey ? requestDigest(requested) : undefined,
    );
  }

  /** POST /projects/{id}/triggers/{triggerId}/run: refresh, then dispatch what the trigger says. */
  async dispatchTrigger(projectId: string, triggerId: string): Promise<Dispatched> {
    const { project } = await this.#deps.projects.refresh(projectId, null);
    const config = this.#projectDefaults(project);
    const trigger = config.triggers?.find((entry) => entry.id === triggerId);
    if (!trigger)
      throw Errors.notFound(
        `trigger "${triggerId}"`,
        `GET /projects/${projectId}/triggers lists this project's triggers`,
      );
    const request = triggerRunRequest({
      trigger,
      defaults: config.defaults,
      project: { id: projectId, defaultBranch: project.defaultBranch },
      agent: this.#agent(trigger.role, project.localPath),
      label: 'manual',
      runBranchPrefix: this.#deps.runBranchPrefix,
    });
    if ('problem' in request)
      throw Errors.validation(request.problem, 'give it a prompt or a seed, or set defaultPrompt in .svc/config.yaml');
    return this.#start(request);
  }

  async cancel(id: string, reason: string | null) {
    const run = await this.get(id);
    const sandboxRun = (state: string) => (run.sandboxRunId ? { id: run.sandboxRunId, state } : null);
    if (isTerminalRunState(run.state)) {
      // A run that ended may still answer its open PR (docs/pr-loop.md): a cancel stops that loop.
      if (run.prState === 'open') await this.#deps.temporal.stopPrLoop(id, { reason, requestedBy: 'operator' });
      return { state: run.state, alreadyTerminal: true, sandboxRun: sandboxRun(run.state) };
    }
    const outcome = await this.#deps.temporal.cancelRun(id, { reason, requestedBy: 'operator' });
    if (outcome === 'closed') {
      // The workflow ended but its row says otherwise: repair it now, and answer what it ended as.
      await this.#deps.temporal.reconcile({ runIds: [id] });
      const repaired = await this.get(id);
      return { state: repaired.state, alreadyTerminal: true, sandboxRun: sandboxRun(repaired.state) };
    }
    const state = outcome?.state ?? (await this.get(id)).state;
    return { state, alreadyTerminal: false, sandboxRun: sandboxRun(state) };
  }

  /**
   * Raises the cap of a run paused at it (onCapHit: pause): its agent starts again on the same
   * workspace. A run that is not paused, or a cap not above its spend, is refused and nothing changes.
   */
  async resume(id: string, maxCostUsd: number) {
    const run = await this.get(id);
    const problem = capRaiseProblem(
      Boolean(run.pausedReason) && !isTerminalRunState(run.state),
      run.costUsd === null || run.costUsd === undefined ? null : Number(run.costUsd),
      maxCostUsd,
    );
    if (problem) throw Errors.conflict(`run ${id} cannot resume: ${problem}`, 'resume a run whose pausedReason is set');
    await this.#deps.temporal.raiseCostCap(id, maxCostUsd);
    return run;
  }

  /** Stores a steering message in the run's inbox (the workflow owns it) and answers it. */
  async steer(id: string, request: { body: string; priority: InboxPriority; fromActor: string }) {
    const run = await this.get(id);
    if (isTerminalRunState(run.state))
      throw Errors.validation(`run ${id} is ${run.state}: it cannot be steered any more`);
    // As GET /agents says: the agent's declared steering, else its runtime's (a Codex run takes none mid-run).
    const agent = run.renderedAgentJson as Partial<Pick<AgentDefinition, 'runtime' | 'steering'>> | null;
    const steering = agent?.runtime
      ? agentSteering({ runtime: agent.runtime, steering: agent.steering ?? null })
      : null;
    if (steering === 'none')
      throw Errors.conflict(`agent ${run.agentName} does not take steering`, 'its definition declares steering: none');
    if (steering === 'spawn-only' && run.state !== 'queued') {
      throw Errors.conflict(
        `agent ${run.agentName} takes steering only before it starts, and run ${id} is ${run.state}`,
        'steer a queued run, or use an agent with steering: mid-run',
      );
    }
    const message: NewInboxItem = {
      id: newId('inboxMessage'),
      body: request.body,
      priority: request.priority,
      fromActor: request.fromActor,
      createdAt: new Date().toISOString(),
    };
    await this.#deps.temporal.steer(id, message);
    return presentInboxItem({ ...message, seq: 0, state: 'unread', deliveredAt: null, deliveredRunId: null });
  }

  /** The projected run, or, in the instant before the first projection lands, the run as its workflow holds it. */
  async get(id: string): Promise<Run | RunSnapshot> {
    const run = await this.#deps.runRows.find(id);
    if (run) return run;
    const accepted = isId('run', id) ? await this.#deps.temporal.acceptedRun(id) : undefined;
    if (!accepted) throw Errors.notFound(`run "${id}"`);
    return accepted;
  }

  /** onlyProjects: a spectator's view, limited to the projects it may see. */
  async list(query: ListRunsQuery, onlyProjects?: Set<string>) {
    const page = await this.#deps.runRows.page(
      { projectId: query.project, agentName: query.agent, states: query.state, onlyProjects },
      { sort: query.sort, dir: query.dir, limit: query.limit, offset: query.offset },
    );
    return { ...page, limit: query.limit, offset: query.offset };
  }
}

/** The first bytes of a file, as text. */
