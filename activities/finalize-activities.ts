// The I/O of a run's tail: the in-sandbox finalizer, svc's own push of the commits the sandbox
// handed over (with the change summary and, when the push fails, salvage), and the pull request.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import { BUNDLE_FILE } from '../core/finalize.ts';
import { parseGitHubUrl } from '../core/git-url.ts';
import { mintRunToken } from '../core/run-token.ts';
import { ProjectEntity } from '../db/entities/index.ts';
import type { ReadModel } from '../db/orm.ts';
import { dataPaths } from '../platform/config.ts';
import type { ForgeCredentials } from '../platform/forge-credentials.ts';
import { workspaceReady } from './environment-cache.ts';
import { ForgeUnavailableError, parsePullRequestUrl, PullRequests, type PullRequestRef } from './forge/github-forge.ts';
import {
  deliverBranch,
  takeBundle,
  summariseNumstat,
  type ChangeSummary,
  type DeliveryOutcome,
} from './git/branch-delivery.ts';
import { git, gitProbe } from '../platform/host-git.ts';
import { projectLockFile, withProjectLock } from '../platform/project-lock.ts';
import {
  readJsonIfExists,
  sandboxFiles,
  sandboxHostId,
  handedBack,
  createMemoryCgroup,
  sandboxLaunch,
  startSandbox,
  type LaunchSpec,
} from '../sandbox/index.ts';
import type { SandboxSettings } from '../platform/sandbox-settings.ts';

export type { ChangeSummary };
export { summariseNumstat };

export interface FinalizeActivityDeps {
  readModel: ReadModel;
  dataDir: string;
  projectsRoot: string;
  /** svc's forge token for each repository: the PAT, or an installation token for that repository alone. */
  forgeCredentials: ForgeCredentials;
  githubApiUrl: string;
  sandbox: SandboxSettings;
  agentApi?: { baseUrl: string; operatorToken: string } | undefined;
}

/** How long a finalizer may live when the workflow does not say (it waits 2 min for its intent). */
const DEFAULT_FINALIZER_LIFETIME_MS = 10 * 60_000;

/** Host variables the finalizer may see: enough for git, nothing of svc's. */
const FINALIZER_ENV = ['PATH', 'LANG', 'LC_ALL', 'TZ'];

export function createFinalizeActivities(deps: FinalizeActivityDeps) {
  const projectOf = async (projectId: string) => {
    const project = await deps.readModel.em().findOne(ProjectEntity, { id: projectId });
    if (!project) throw ApplicationFailure.nonRetryable(`project ${projectId} not found`, 'not_found');
    const parsed = parseGitHubUrl(project.gitUrl);
    if (!parsed.ok) throw ApplicationFailure.nonRetryable(`project ${projectId} has an unusable git URL`, 'not_found');
    return { project, repo: parsed.repo };
  };

  return {
    /**
     * Starts the in-sandbox finalizer under its own supervisor, in the agent's sandbox (same
     * workspace, same isolation and uid, a network of the run's callback routes only). Exactly
     * once: a retry finds the supervisor's claim and starts nothing.
     */
    async startSandboxFinalizer({
      runId,
      maxLifetimeMs,
    }: {
      runId: string;
      maxLifetimeMs?: number;
    }): Promise<{ started: boolean }> {
      const agentDir = join(dataPaths.sandboxes(deps.dataDir), runId);
      const agentSpec = readJsonIfExists<LaunchSpec>(sandboxFiles(agentDir).spec);
      if (!agentSpec) throw ApplicationFailure.nonRetryable(`run ${runId} has no sandbox`, 'sandbox_run_lost');
      // The finalizer reads the agent's workspace: its layers, lost to a reboot or an unmount, mounted again.
      const unmountable = await workspaceReady(deps.dataDir, runId, sandboxHostId(runId, deps.sandbox));
      if (unmountable) throw ApplicationFailure.nonRetryable(unmountable, 'environment_gone');
      const lifetime = maxLifetimeMs ?? DEFAULT_FINALIZER_LIFETIME_MS;
      // The finalizer tries to reach svc until shortly before its supervisor would stop it.
      const env: Record<string, string> = {
        SVC_RUN_ID: runId,
        SVC_FINALIZE_DEADLINE: String(Date.now() + lifetime - 10_000),
      };
      for (const name of FINALIZER_ENV) if (process.env[name] !== undefined) env[name] = process.env[name]!;
      const callback = deps.agentApi
        ? { baseUrl: deps.agentApi.baseUrl, runId, token: mintRunToken(deps.agentApi.operatorToken, runId) }
        : null;
      const limitMiB =
        agentSpec.memoryCgroup?.limitMiB ?? agentSpec.container?.memoryLimitMiB ?? agentSpec.pod?.memoryLimitMiB;
      const { spec } = sandboxLaunch({
        name: `${runId}-finalize`,
        // The agent's own image: the finalizer needs its git, and sees nothing the agent did not.
        image: agentSpec.container?.image ?? agentSpec.pod?.manifest.spec?.containers[0]?.image,
        engineFacts: agentSpec.container?.engineFacts,
        memoryLimitMiB: limitMiB,
        dir: join(agentDir, 'finalize'),
        launch: { argv: [process.execPath], cwd: agentSpec.cwd, env, stdin: null },
        isolation: agentSpec.pod
          ? 'kubernetes'
          : agentSpec.container
            ? 'container'
            : agentSpec.network
              ? 'bubblewrap'
              : 'process',
        settings: deps.sandbox,
        hostId: agentSpec.network ? sandboxHostId(runId, deps.sandbox) : null,
        egress: [],
        callback,
        program: 'finalizer',
        outbox: join(agentDir, 'outbox'),
        // The finalizer outlives the worker that starts it: it must go on if that worker dies.
        dieWithParent: false,
        forbidden: [deps.dataDir, deps.projectsRoot],
        trustCommand: true,
      });
      // The agent's git config runs in here too (fsmonitor, filters): same memory limit, and a lifetime.
      const memory = limitMiB ? createMemoryCgroup(`${runId}-finalize`, limitMiB) : null;
      const launch = {
        ...spec,
        memoryCgroup: memory?.enforced ? memory.cgroup : null,
        maxLifetimeMs: lifetime,
      };
      // Well inside the activity's 30 s: a finalizer that has not spawned by then is retried.
      const status = await startSandbox(join(agentDir, 'finalize'), launch, launch.pod ? 25_000 : 10_000);
      return { started: status.kind !== 'lost' };
    },

    /**
     * svc's push of what the sandbox handed over: its bundle, fetched into the project clone and
     * pushed from there with svc's credential; measured when pushed, salvaged when not.
     */
    async deliverBranch({
      projectId,
      runId,
      branch,
      baseBranch,
    }: {
      projectId: string;
      runId: string;
      branch: string;
      baseBranch: string;
    }): Promise<DeliveryOutcome> {
      const { project, repo } = await projectOf(projectId);
      const remote = await deps.forgeCredentials.gitRemote(repo.owner, repo.name);
      const outbox = join(dataPaths.sandboxes(deps.dataDir), runId, 'outbox');
      // A finalizer pod sends its outbox back after it posted its result.
      await handedBack(sandboxFiles(join(dataPaths.sandboxes(deps.dataDir), runId, 'finalize')), 'outbox', 60_000);
      const bundle = join(deps.dataDir, 'handoff', `${runId}.bundle`);
      const refused = await takeBundle(join(outbox, BUNDLE_FILE), bundle);
      if (refused) return { pushed: false, error: refused, summary: null, salvage: null };
      try {
        return await withProjectLock(projectLockFile(deps.projectsRoot, repo.owner, repo.name), 'exclusive', () =>
          deliverBranch({
            clone: project.localPath,
            scratch: join(deps.dataDir, 'handoff', `${runId}.git`),
            runId,
            branch,
            baseBranch,
            bundle,
            dataDir: deps.dataDir,
            remote,
          }),
        );
      } finally {
        // A retry takes the bundle from the outbox again; the salvage keeps its own copy.
        rmSync(bundle, { force: true });
      }
    },

    /** Reads what the pushed branch holds over its base, from the project clone: runs recorded before the hand-over. */
    async measureChanges({
      projectId,
      runId,
      branch,
      baseBranch,
    }: {
      projectId: string;
      runId: string;
      branch: string;
      baseBranch: string;
    }): Promise<ChangeSummary> {
      const { project, repo } = await projectOf(projectId);
      const outcomeRef = `refs/svc/outcome-facts/${runId}`;
      const remote = await deps.forgeCredentials.gitRemote(repo.owner, repo.name);
      return withProjectLock(projectLockFile(deps.projectsRoot, repo.owner, repo.name), 'exclusive', async () => {
        const cwd = project.localPath;
        await git(
          [
            'fetch',
            '--quiet',
            '--no-tags',
            'origin',
            `+refs/heads/${baseBranch}:refs/remotes/origin/${baseBranch}`,
            `+refs/heads/${branch}:${outcomeRef}`,
          ],
          { cwd, remote },
        );
        try {
          const base = `refs/remotes/origin/${baseBranch}`;
          const commitsAhead = Number(await git(['rev-list', '--count', `${base}..${outcomeRef}`], { cwd }));
          if (commitsAhead === 0) return { commitsAhead: 0, filesChanged: 0, insertions: 0, deletions: 0 };
          return summariseNumstat(await git(['diff', '--numstat', `${base}...${outcomeRef}`], { cwd }), commitsAhead);
        } finally {
          await gitProbe(['update-ref', '-d', outcomeRef], { cwd });
        }
      });
    },

    /**
     * Retired: salvage used to run git in the agent's workspace with svc's rights. Runs recorded
     * before the hand-over (replayed histories) still call it; it records why nothing was kept.
     */
    async salvageWorkspace(_input: {
      runId: string;
      workspacePath: string;
      baseBranch: string;
    }): Promise<{ salvageRef: string | null; salvagePath: string | null; notes: string[] }> {
      return {
        salvageRef: null,
        salvagePath: null,
        notes: ['host-side salvage is retired: svc never runs git in an agent workspace (docs/security.md)'],
      };
    },

    /** Opens the run's PR (or finds the one already open for its branch): never two. */
    async openPullRequest(input: {
      projectId: string;
      runId: string;
      branch: string;
      baseBranch: string;
      title: string;
      body: string;
    }): Promise<PullRequestRef | { skipped: string }> {
      const { repo } = await projectOf(input.projectId);
      let forge: PullRequests;
      try {
        const token = await deps.forgeCredentials.tokenFor(repo.owner, repo.name);
        forge = new PullRequests({ apiUrl: deps.githubApiUrl, token });
      } catch (error) {
        if (error instanceof ForgeUnavailableError) return { skipped: error.message };
        throw error;
      }
      return forge.open({
        owner: repo.owner,
        name: repo.name,
        head: input.branch,
        base: input.baseBranch,
        title: input.title,
        body: input.body,
      });
    },

    async checkPullRequest({ prUrl }: { prUrl: string }): Promise<PullRequestRef> {
      const pull = parsePullRequestUrl(prUrl);
      const token = pull ? await deps.forgeCredentials.tokenFor(pull.owner, pull.name) : undefined;
      return new PullRequests({ apiUrl: deps.githubApiUrl, token }).get(prUrl);
    },
  };
}

export type FinalizeActivities = ReturnType<typeof createFinalizeActivities>;
