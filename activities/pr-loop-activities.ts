// The PR loop's I/O (workflows/pr-loop.ts): what the forge says about a run's PR, a merge, a
// comment, and a follow-up round's run input (the project's agent for the role, continuing on the
// run's own branch) and its report on the PR.
import type { AgentCatalog } from '../platform/agent-catalog.ts';
import { newId } from '../core/ids.ts';
import type { FollowUpKind, PrStatus } from '../core/pr-loop.ts';
import { buildRunInput, projectRunSettings } from '../core/run-input.ts';
import type { RunTiming, RunWorkflowInput } from '../core/run-model.ts';
import { ProjectEntity, RunEntity, RunEventEntity } from '../db/entities/index.ts';
import { eventsOfRows } from '../db/run-event-chunks.ts';
import type { ReadModel } from '../db/orm.ts';
import { dataPaths } from '../platform/config.ts';
import type { ForgeCredentials } from '../platform/forge-credentials.ts';
import { redactKnownSecretsAndCut } from '../platform/secrets.ts';
import { inertText } from '../core/inert-text.ts';
import { loadSvcConfigFrom } from '../platform/svc-config-files.ts';
import { parsePullRequestUrl, PullRequests } from './forge/github-forge.ts';

export interface PrLoopActivityDeps {
  readModel: ReadModel;
  dataDir: string;
  forgeCredentials: ForgeCredentials;
  githubApiUrl: string;
  agents: AgentCatalog;
  runBranchPrefix: string;
  runTiming?: RunTiming;
  maxConcurrentRuns?: number | null;
}

export interface FollowUpRequest {
  rootRunId: string;
  kind: FollowUpKind;
  round: number;
  /** The agent of the round; null: the root run's own. */
  role: string | null;
  prompt: string;
  /** The PR's base now (it may have been retargeted since the run): the round counts from it, a rebase merges it. */
  baseBranch?: string;
}

const REPORT_LINES = 15;

/** How a round's report on the PR names what it tried. */
const ROUND_GOALS: Record<FollowUpKind, string> = {
  ci_fix: 'fix the failing checks',
  review: 'make the requested changes',
  comment: 'do what the comment asked',
  rebase: 'resolve the conflict with the base',
};

export function createPrLoopActivities(deps: PrLoopActivityDeps) {
  const forgeFor = async (prUrl: string) => {
    const pull = parsePullRequestUrl(prUrl);
    const token = pull ? await deps.forgeCredentials.tokenFor(pull.owner, pull.name) : undefined;
    return new PullRequests({ apiUrl: deps.githubApiUrl, token });
  };
  return {
    async pullRequestStatus(input: {
      prUrl: string;
      logTailLines: number;
      handledComments?: number[];
      /** The project's CI (ciFixer.apps); unset (runs dispatched before it was asked): GitHub Actions. */
      ciApps?: string[];
    }): Promise<PrStatus> {
      return (await forgeFor(input.prUrl)).status(
        input.prUrl,
        input.logTailLines,
        input.handledComments ?? [],
        input.ciApps,
      );
    },

    /** Merges at this head; a refusal (the head moved, not mergeable) is an answer, not an error. */
    async mergePullRequest(input: { prUrl: string; method: 'squash' | 'merge' | 'rebase'; sha: string }) {
      try {
        await (await forgeFor(input.prUrl)).merge(input.prUrl, input.method, input.sha);
        return { merged: true as const };
      } catch (error) {
        const status = (error as { status?: number }).status;
        if (status === 405 || status === 409 || status === 422)
          return { merged: false as const, refused: (error as Error).message.slice(0, 500) };
        throw error;
      }
    },

    async commentOnPullRequest({ prUrl, body }: { prUrl: string; body: string }): Promise<void> {
      await (await forgeFor(prUrl)).comment(prUrl, body);
    },

    /**
     * The round's run: the role's agent (the project's own agents first), on the root run's branch,
     * continuing from its pushed work; null with a reason when it cannot be made.
     */
    async prepareFollowUp(request: FollowUpRequest): Promise<{ input: RunWorkflowInput } | { problem: string }> {
      const em = deps.readModel.em();
      const root = await em.findOne(RunEntity, { id: request.rootRunId });
      const project = root?.projectId ? await em.findOne(ProjectEntity, { id: root.projectId }) : null;
      if (!root || !project || !root.branch) return { problem: `run ${request.rootRunId} has no project branch` };
      const role = request.role ?? root.agentName;
      let agent;
      try {
        agent = deps.agents.withProjectAgents(project.localPath).get(role);
      } catch (error) {
        return { problem: (error as Error).message };
      }
      if (!agent) return { problem: `the agent "${role}" is unknown` };
      const config = loadSvcConfigFrom(project.localPath);
      const input = buildRunInput(
        {
          runId: newId('run'),
          createdAt: Date.now(),
          agent,
          projectId: project.id,
          prompt: request.prompt,
          trigger: `pr-loop:${request.kind}`,
          targetBranch: root.branch,
          ref: request.baseBranch ?? root.ref ?? null,
          ...projectRunSettings(config.defaults, project.defaultBranch, deps.runBranchPrefix),
          timing: deps.runTiming,
          instanceMaxConcurrentRuns: deps.maxConcurrentRuns ?? null,
          parent: { runId: root.id, cloneKind: 'continue', branch: root.branch },
          followUp: { rootRunId: root.id, kind: request.kind, round: request.round },
          metadata: { prLoop: { rootRunId: root.id, kind: request.kind, round: request.round } },
        },
        dataPaths.workspaces(deps.dataDir),
      );
      return { input };
    },

    /** Posts what a round did on the PR: its outcome and the end of its agent's output. */
    async reportFollowUp(input: { prUrl: string; runId: string; kind: FollowUpKind; round: number }): Promise<void> {
      const em = deps.readModel.em();
      const run = await em.findOne(RunEntity, { id: input.runId });
      // Each row holds one line or more (a chunk of output): REPORT_LINES rows hold the last lines.
      const rows = await em.find(
        RunEventEntity,
        { runId: input.runId, kind: { $in: ['assistant', 'log.stdout'] } },
        { orderBy: { seq: 'desc' }, limit: REPORT_LINES },
      );
      const lines = eventsOfRows(rows.reverse()).slice(-REPORT_LINES);
      // Posted on the PR, which may be public: svc's secrets and credential shapes never go with it.
      const output = inertText(
        redactKnownSecretsAndCut(
          lines.map((event) => String((event.payload as { text?: unknown } | null)?.text ?? '')).join('\n'),
          4000,
          'end',
        ).text,
      );
      const what = ROUND_GOALS[input.kind];
      const outcome = run
        ? `${run.state}${run.failureReason ? ` (${run.failureReason})` : ''}` +
          (run.commitsAhead ? `, ${run.commitsAhead} commits ahead` : '')
        : 'unknown';
      const body = [
        `svc round ${input.round}: run \`${input.runId}\` tried to ${what}: ${outcome}.`,
        ...(output ? ['', '```', output, '```'] : []),
      ].join('\n');
      await (await forgeFor(input.prUrl)).comment(input.prUrl, body);
    },
  };
}
