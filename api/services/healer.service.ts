// POST /alerts/heal: an alert → the project whose `.svc/config.yaml` `healer` takes it → the
// fingerprint's healer workflow decides (cooldown, retry limit, kept durably in Temporal) → a
// healer-role run dispatched like any POST /runs, with the alert as its prompt.
import { WithStartWorkflowOperation } from '@temporalio/client';
import {
  healerPrompt,
  healerWorkflowId,
  parseAlert,
  projectTakesAlert,
  type Alert,
  type AlertSource,
  type HealSkipReason,
} from '../../core/healer.ts';
import type { HealDecision } from '../../core/healer-policy.ts';
import type { SvcDefaults } from '../../core/svc-config.ts';
import type { Project } from '../../db/entities/index.ts';
import type { ProjectsRepository } from '../../db/repositories/projects.repository.ts';
import type { AgentCatalog } from '../../platform/agent-catalog.ts';
import { loadSvcConfigFrom } from '../../platform/svc-config-files.ts';
import type { healerWorkflow } from '../../workflows/healer.workflow.ts';
import { healAlertUpdate, healerDispatchFailedSignal, healerRunStartedSignal } from '../../workflows/messages.ts';
import { ApiError, Errors } from '../errors.ts';
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
}

export interface HealerServiceDeps {
  projectRows: ProjectsRepository;
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
    const candidates = await this.#candidates();
    if (!candidates.some((candidate) => candidate.healer.enabled)) return skipped('disabled');
    const match = candidates.find(({ project, healer }) =>
      projectTakesAlert(healer.projectMapping, repoName(project.gitUrl), alert),
    );
    if (!match) return skipped('no_match');
    if (!match.healer.enabled) return skipped('disabled');
    this.#checkRole(match);
    const decision = await this.#decide(match, alert);
    if (decision.decision === 'skip') return skipped(decision.reason);
    const runId = await this.#dispatch(match, alert, decision);
    return { status: 'dispatched', runId, fingerprint: alert.fingerprint, projectId: match.project.id, source };
  }

  /** Every registered project with a `healer` section in a config that loads. */
  async #candidates(): Promise<Candidate[]> {
    const candidates: Candidate[] = [];
    for (const project of await this.#deps.projectRows.all()) {
      const healer = loadSvcConfigFrom(project.localPath).defaults?.healer;
      if (healer) candidates.push({ project, healer });
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

  /** Asks (starting it if need be) the fingerprint's healer workflow whether to dispatch now. */
  async #decide({ project, healer }: Candidate, alert: Alert): Promise<HealDecision> {
    const { client, taskQueue } = this.#deps.temporal;
    try {
      return await this.#deps.temporal.call(() =>
        client.workflow.executeUpdateWithStart(healAlertUpdate, {
          args: [
            { prompt: healerPrompt(alert), cooldownMinutes: healer.cooldownMinutes, maxRetries: healer.maxRetries },
          ],
          startWorkflowOperation: new WithStartWorkflowOperation<typeof healerWorkflow>('healerWorkflow', {
            workflowId: healerWorkflowId(project.id, alert.fingerprint),
            taskQueue,
            args: [{ projectId: project.id, fingerprint: alert.fingerprint }],
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
  async #dispatch({ project, healer }: Candidate, alert: Alert, decision: HealDecision & { decision: 'dispatch' }) {
    const handle = this.#deps.temporal.client.workflow.getHandle(healerWorkflowId(project.id, alert.fingerprint));
    const attempt = decision.attempt;
    let runId: string;
    try {
      const { run } = await this.#deps.runs.dispatch(
        { agent: healer.role, project: project.id, prompt: decision.prompt, trigger: 'healer' },
        `healer:${alert.fingerprint}:${attempt}`,
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
