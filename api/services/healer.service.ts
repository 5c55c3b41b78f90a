// POST /alerts/heal: an alert → the one project that claims its source project and whose
// `.svc/config.yaml` `healer` takes it most specifically → that project's healer workflow decides
// (cooldowns, retry limit, concurrent runs, kept durably in Temporal) → a healer-role run
// dispatched like any POST /runs, with the alert quoted (masked, bounded) in its prompt.
import { WithStartWorkflowOperation, WorkflowNotFoundError } from '@temporalio/client';
import {
  chooseHealer,
  healerMemoryKey,
  healerPrompt,
  healerWorkflowId,
  parseAlert,
  projectTakesAlert,
  type Alert,
  type AlertSource,
  type HealSkipReason,
} from '../../core/healer.ts';
import type { HealDecision } from '../../core/healer-policy.ts';
import { isTerminalRunState } from '../../core/run-states.ts';
import type { SvcDefaults } from '../../core/svc-config.ts';
import type { Project } from '../../db/entities/index.ts';
import type { ProjectsRepository } from '../../db/repositories/projects.repository.ts';
import type { RunsRepository } from '../../db/repositories/runs.repository.ts';
import type { AgentCatalog } from '../../platform/agent-catalog.ts';
import { loadSvcConfigFrom } from '../../platform/svc-config-files.ts';
import type { healerWorkflow } from '../../workflows/healer.workflow.ts';
import {
  healAlertUpdate,
  healerDispatchFailedSignal,
  healerRunStartedSignal,
  healerUnfinishedRunsQuery,
} from '../../workflows/messages.ts';
import { ApiError, Errors } from '../errors.ts';
import { redactKnownSecrets } from '../../platform/secrets.ts';
import { resolveAgent } from './agent-resolver.ts';
import type { RunsService } from './runs.service.ts';
import { wrapConnectionError } from './temporal-errors.ts';
import type { TemporalGateway } from './temporal-gateway.ts';

export type HealOutcome =
  | { status: 'dispatched'; runId: string; fingerprint: string; projectId: string; source: AlertSource }
  | { status: 'skipped'; reason: HealSkipReason; fingerprint: string; source: AlertSource };

type HealerSettings = NonNullable<SvcDefaults['healer']>;

interface Candidate {
  project: Project;
  healer: HealerSettings;
  enabled: boolean;
  specificity: number | null;
}

/**
 * The one masking of alert text before it enters a healer's prompt (and so a run, its events and
 * what spectators of a project with `showPrompts` read): every secret svc knows, by value, and
 * credentials by their shapes.
 */
export const maskAlertText = (text: string): string => redactKnownSecrets(text);

export interface HealerServiceDeps {
  projectRows: ProjectsRepository;
  runRows: RunsRepository;
  temporal: TemporalGateway;
  agents: AgentCatalog;
  runs: RunsService;
}

const repoName = (gitUrl: string) =>
  gitUrl
    .replace(/\.git$/, '')
    .split(/[/:]/)
    .at(-1) ?? '';

/** The alert-healing use-case behind POST /alerts/heal. */
export class HealerService {
  readonly #deps: HealerServiceDeps;

  constructor(deps: HealerServiceDeps) {
    this.#deps = deps;
  }

  async heal(source: AlertSource, body: Record<string, unknown>): Promise<HealOutcome> {
    const alert = parseAlert(source, body);
    if (!alert)
      throw Errors.validation(
        `the body is not a ${source} webhook: no issue, event or alert in it`,
        source === 'sentry' ? 'send the webhook Sentry posts, unchanged' : 'send the webhook Grafana posts, unchanged',
      );
    const skipped = (reason: HealSkipReason): HealOutcome => ({
      status: 'skipped',
      reason,
      fingerprint: alert.fingerprint,
      source,
    });
    const choice = chooseHealer(await this.#candidates(alert));
    if (choice.status === 'skipped') return skipped(choice.reason);
    const match = choice.candidate;
    this.#checkRole(match);
    const decision = await this.#decide(match, alert);
    if (decision.decision === 'skip') return skipped(decision.reason);
    const runId = await this.#dispatch(match, decision);
    return { status: 'dispatched', runId, fingerprint: alert.fingerprint, projectId: match.project.id, source };
  }

  /** Every registered project with a `healer` section in a config that loads, and how it takes the alert. */
  async #candidates(alert: Alert): Promise<Candidate[]> {
    const candidates: Candidate[] = [];
    for (const project of await this.#deps.projectRows.all()) {
      const healer = loadSvcConfigFrom(project.localPath).defaults?.healer;
      if (healer)
        candidates.push({
          project,
          healer,
          enabled: healer.enabled,
          specificity: projectTakesAlert(healer, repoName(project.gitUrl), alert),
        });
    }
    return candidates;
  }

  /** An unknown healer role is the operator's config mistake: 400 before any attempt is spent. */
  #checkRole({ project, healer }: Candidate): void {
    try {
      resolveAgent(this.#deps.agents, healer.role, project.localPath);
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 404) throw error;
      throw Errors.validation(
        `the healer role "${healer.role}" of project ${project.id} is not an agent svc knows`,
        'set healer.role in .svc/config.yaml to an agent of GET /agents (or add it under .svc/agents/)',
      );
    }
  }

  /**
   * The runs of the project's memory the read model shows finished. Finished is for good, so
   * whatever happens between this read and the decision, a run is never counted out too early.
   */
  async #finishedRuns(projectId: string): Promise<string[]> {
    const handle = this.#deps.temporal.client.workflow.getHandle(healerWorkflowId(projectId));
    let unfinished: string[];
    try {
      unfinished = await this.#deps.temporal.call(() => handle.query(healerUnfinishedRunsQuery));
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return [];
      throw wrapConnectionError(error);
    }
    const runs = await this.#deps.runRows.byIds(unfinished);
    return runs.filter((run) => isTerminalRunState(run.state)).map((run) => run.id);
  }

  /** Asks (starting it if need be) the project's healer workflow whether to dispatch now. */
  async #decide({ project, healer }: Candidate, alert: Alert): Promise<HealDecision> {
    const { client, taskQueue } = this.#deps.temporal;
    const finishedRunIds = await this.#finishedRuns(project.id);
    try {
      return await this.#deps.temporal.call(() =>
        client.workflow.executeUpdateWithStart(healAlertUpdate, {
          args: [
            {
              fingerprint: healerMemoryKey(alert),
              prompt: healerPrompt(alert, maskAlertText),
              cooldownMinutes: healer.cooldownMinutes,
              maxRetries: healer.maxRetries,
              projectCooldownMinutes: healer.projectCooldownMinutes,
              maxConcurrentRuns: healer.maxConcurrentRuns,
              finishedRunIds,
            },
          ],
          startWorkflowOperation: new WithStartWorkflowOperation<typeof healerWorkflow>('healerWorkflow', {
            workflowId: healerWorkflowId(project.id),
            taskQueue,
            args: [{ projectId: project.id }],
            workflowIdConflictPolicy: 'USE_EXISTING',
          }),
        }),
      );
    } catch (error) {
      throw wrapConnectionError(error);
    }
  }

  /**
   * The attempt's run, under an idempotency key of its own: an attempt offered again (its first
   * dispatcher died) finds the run if it was started. A refused dispatch gives the attempt back.
   */
  async #dispatch({ project, healer }: Candidate, decision: HealDecision & { decision: 'dispatch' }) {
    const handle = this.#deps.temporal.client.workflow.getHandle(healerWorkflowId(project.id));
    const attempt = decision.attempt;
    let runId: string;
    try {
      const { run } = await this.#deps.runs.dispatch(
        { agent: healer.role, project: project.id, prompt: decision.prompt, trigger: 'healer' },
        `healer:${decision.key}`,
      );
      runId = run.id;
    } catch (error) {
      if (error instanceof ApiError && error.status < 500)
        await this.#deps.temporal.call(() => handle.signal(healerDispatchFailedSignal, { attempt }));
      throw error;
    }
    await this.#deps.temporal.call(() => handle.signal(healerRunStartedSignal, { attempt, runId }));
    return runId;
  }
}
