// The five routes a run's own sandbox calls back on (with its per-run token): the steering inbox,
// the finalize intent and result, salvage, and the push credential. Kept apart from RunsService,
// which serves operators: a different audience with different rules.
import { rmSync } from 'node:fs';
import { finalizeState, inbox, recordSalvage, sendFinalizeResult } from './sandbox-messages.ts';
import type { FinalizeResult } from '../../core/finalize.ts';
import { presentInboxItem } from '../../core/inbox.ts';
import { isTerminalRunState } from '../../core/run-states.ts';
import type { InboxRepository } from '../../db/repositories/inbox.repository.ts';
import type { ProjectsRepository } from '../../db/repositories/projects.repository.ts';
import { parseGitHubUrl } from '../../core/git-url.ts';
import type { ForgeCredentials } from '../../platform/forge-credentials.ts';
import { dataPaths } from '../../platform/config.ts';
import { isGitBundle, keepSalvageBundle } from '../../platform/salvage-store.ts';
import { Errors } from '../errors.ts';
import type { RunsService } from './runs.service.ts';
import type { TemporalGateway } from './temporal-gateway.ts';

export interface SandboxCallbacksDeps {
  inboxRows: InboxRepository;
  temporal: TemporalGateway;
  dataDir: string;
  runs: Pick<RunsService, 'get'>;
  /** The run's project, for the repository its git-credential is scoped to. */
  projectRows?: Pick<ProjectsRepository, 'find'>;
  /** Mints a sandbox's installation token (with a GitHub App installed); absent: always null. */
  forgeCredentials?: Pick<ForgeCredentials, 'sandboxTokenFor'>;
}

export class SandboxCallbacksService {
  readonly #deps: SandboxCallbacksDeps;

  constructor(deps: SandboxCallbacksDeps) {
    this.#deps = deps;
  }

  /**
   * GET …/inbox: claims every unread message (or, with peek, lists them). A terminal run has nothing
   * to claim. Agents poll this every half second: a claim is a workflow update (history events), so
   * it is made only when the projection shows an unread message; one steered an instant ago (not yet
   * projected) is claimed by the next poll.
   */
  async inbox(id: string, peek: boolean) {
    const run = await this.#deps.runs.get(id);
    if (!peek && !isTerminalRunState(run.state) && !(await this.#deps.inboxRows.hasUnread(id))) return [];
    const live = isTerminalRunState(run.state) ? undefined : await inbox(this.#deps.temporal, id, !peek);
    if (live) return live.map(presentInboxItem);
    if (!peek) return [];
    const rows = await this.#deps.inboxRows.unreadFor(id);
    return rows.map((row) => ({
      id: row.id,
      runId: row.deliveredRunId ?? null,
      body: row.body,
      priority: row.priority,
      fromActor: row.fromActor,
      state: row.state,
      createdAt: row.createdAt.toISOString(),
      deliveredAt: row.deliveredAt?.toISOString() ?? null,
    }));
  }

  /** The parked intent. It never carries a credential: the sandbox hands its commits over and svc pushes. */
  async finalizeIntent(id: string) {
    await this.#deps.runs.get(id);
    const state = await finalizeState(this.#deps.temporal, id);
    return { intent: state?.intent ?? null };
  }

  /**
   * accepted (for the parked attempt, first time), duplicate (already had one), stale (another
   * attempt), unknown (nothing parked).
   */
  async finalizeResult(
    id: string,
    attemptId: string,
    result: FinalizeResult,
  ): Promise<{ outcome: 'accepted' | 'duplicate' | 'stale' | 'unknown' }> {
    const run = await this.#deps.runs.get(id);
    const state = isTerminalRunState(run.state) ? undefined : await finalizeState(this.#deps.temporal, id);
    if (!state?.intent) return { outcome: 'unknown' };
    if (state.intent.attemptId !== attemptId) return { outcome: 'stale' };
    if (state.received) return { outcome: 'duplicate' };
    await sendFinalizeResult(this.#deps.temporal, id, attemptId, result);
    return { outcome: 'accepted' };
  }

  /** Where salvage bundles are spooled while they arrive. */
  get salvageSpoolDir(): string {
    return dataPaths.salvage(this.#deps.dataDir);
  }

  /**
   * A sandbox's own salvage: the bundle (spooled to `bundleFile` as it arrived) is kept in the data
   * directory, the run records where. Idempotent.
   */
  async salvage(
    id: string,
    envelope: { trigger: string; rescueRef?: string | null; notes?: string[] },
    bundleFile: string | null,
  ) {
    let salvagePath: string | null = null;
    try {
      const run = await this.#deps.runs.get(id);
      if (isTerminalRunState(run.state))
        throw Errors.validation(`run ${id} is ${run.state}: salvage is taken only while it finalizes`);
      if (bundleFile) {
        if (!isGitBundle(bundleFile))
          throw Errors.validation('bundleBase64 is not a git bundle', 'send the base64 of `git bundle create`');
        salvagePath = keepSalvageBundle(this.#deps.dataDir, id, bundleFile, 'move');
      }
    } finally {
      if (bundleFile) rmSync(bundleFile, { force: true });
    }
    await recordSalvage(this.#deps.temporal, id, {
      trigger: envelope.trigger,
      salvageRef: envelope.rescueRef ?? null,
      salvagePath,
      notes: envelope.notes ?? [],
    });
    return { stored: salvagePath !== null || Boolean(envelope.rescueRef), rescueRef: envelope.rescueRef ?? null };
  }

  /**
   * A push credential for the run's project, while the run is live: with a GitHub App installed,
   * an installation token for that one repository (contents and metadata only, an hour at most);
   * otherwise null. The operator's token (PAT) and the App's key are never handed out.
   */
  async gitCredential(id: string): Promise<{ gitToken: string | null }> {
    const run = await this.#deps.runs.get(id);
    if (!run.projectId) throw Errors.notFound(`project of run "${id}"`, 'the run has no project to push to');
    const { projectRows, forgeCredentials } = this.#deps;
    if (!projectRows || !forgeCredentials || isTerminalRunState(run.state)) return { gitToken: null };
    const project = await projectRows.find(run.projectId);
    if (!project) throw Errors.notFound(`project "${run.projectId}"`, "the run's project was deleted");
    const parsed = parseGitHubUrl(project.gitUrl);
    if (!parsed.ok) return { gitToken: null };
    return { gitToken: await forgeCredentials.sandboxTokenFor(parsed.repo.owner, parsed.repo.name) };
  }
}
