// The I/O of a run's tail: the git credential, the in-sandbox finalizer, the change summary read
// from the pushed branch, salvage of work that could not be pushed, and the pull request.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApplicationFailure } from '@temporalio/activity';
import { parseGitHubUrl } from '../core/git-url.ts';
import { ProjectEntity } from '../db/entities/index.ts';
import type { ReadModel } from '../db/orm.ts';
import { dataPaths } from '../stack/config.ts';
import { ForgeUnavailableError, PullRequests, type PullRequestRef } from './forge/github-forge.ts';
import { git, gitProbe } from './git/git.ts';
import { projectLockFile, withProjectLock } from './git/project-lock.ts';
import { readJsonIfExists, sandboxFiles, type LaunchSpec } from './sandbox/files.ts';
import { chooseIsolation, isolate, type SandboxSettings } from './sandbox/isolation.ts';

const FINALIZER_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'sandbox', 'finalizer.ts');

export interface FinalizeActivityDeps {
  readModel: ReadModel;
  dataDir: string;
  projectsRoot: string;
  githubToken: string | undefined;
  githubApiUrl: string;
  sandbox: SandboxSettings;
}

export interface ChangeSummary {
  commitsAhead: number;
  filesChanged: number;
  insertions: number;
  deletions: number;
}

/** `git diff --numstat` rows: each row a file; a binary file ("-") counts with 0 lines. */
export function summariseNumstat(numstat: string, commitsAhead: number): ChangeSummary {
  const rows = numstat.split('\n').filter(Boolean);
  let insertions = 0;
  let deletions = 0;
  for (const row of rows) {
    const [added, removed] = row.split('\t');
    insertions += added === '-' ? 0 : Number(added);
    deletions += removed === '-' ? 0 : Number(removed);
  }
  return { commitsAhead, filesChanged: rows.length, insertions, deletions };
}

export function createFinalizeActivities(deps: FinalizeActivityDeps) {
  const projectOf = async (projectId: string) => {
    const project = await deps.readModel.em().findOne(ProjectEntity, { id: projectId });
    if (!project) throw ApplicationFailure.nonRetryable(`project ${projectId} not found`, 'not_found');
    const parsed = parseGitHubUrl(project.gitUrl);
    if (!parsed.ok) throw ApplicationFailure.nonRetryable(`project ${projectId} has an unusable git URL`, 'not_found');
    return { project, repo: parsed.repo };
  };

  return {
    /** A push credential for the run's project: the configured token (PAT mode), or none. */
    async mintGitCredential(_input: { projectId: string }): Promise<{ gitToken: string | null }> {
      return { gitToken: deps.githubToken ?? null };
    },

    /** Starts the in-sandbox finalizer, once: a retry finds the claim and starts nothing. */
    async startSandboxFinalizer({ runId }: { runId: string }): Promise<{ started: boolean }> {
      const files = sandboxFiles(join(dataPaths.sandboxes(deps.dataDir), runId));
      const spec = readJsonIfExists<LaunchSpec>(files.spec);
      if (!spec) throw ApplicationFailure.nonRetryable(`run ${runId} has no sandbox`, 'sandbox_run_lost');
      // The finalizer claims its run itself (O_EXCL, in the sandbox home it may write): a retry after
      // a crash between this check and the spawn starts one, and a second one exits at the claim.
      const claim = join(files.dir, 'home', '.finalizer.claim');
      if (existsSync(claim)) return { started: false };
      // Inside the same sandbox as the agent: whatever the workspace holds (git hooks included) runs
      // with the agent's rights, never with svc's.
      mkdirSync(dirname(claim), { recursive: true });
      const launch = isolate({ argv: [process.execPath, '--no-warnings', FINALIZER_SCRIPT], cwd: spec.cwd, env: { ...spec.env, SVC_FINALIZER_CLAIM: claim }, stdin: null }, chooseIsolation(deps.sandbox), join(files.dir, 'home'), deps.sandbox, { dieWithParent: false });
      const log = openSync(join(files.dir, 'finalizer.log'), 'a');
      const child = spawn(launch.argv[0]!, launch.argv.slice(1), { cwd: launch.cwd, env: launch.env, detached: true, stdio: ['ignore', log, log] });
      child.unref();
      closeSync(log);
      return { started: true };
    },

    /** Reads what the pushed branch holds over its base, from the project clone (under its lock). */
    async measureChanges({ projectId, runId, branch, baseBranch }: { projectId: string; runId: string; branch: string; baseBranch: string }): Promise<ChangeSummary> {
      const { project, repo } = await projectOf(projectId);
      const outcomeRef = `refs/svc/outcome-facts/${runId}`;
      return withProjectLock(projectLockFile(deps.projectsRoot, repo.owner, repo.name), 'exclusive', async () => {
        const cwd = project.localPath;
        await git(['fetch', '--quiet', '--no-tags', 'origin', `+refs/heads/${baseBranch}:refs/remotes/origin/${baseBranch}`, `+refs/heads/${branch}:${outcomeRef}`], { cwd, token: deps.githubToken });
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
     * Keeps work that could not be pushed: a rescue ref on origin when the remote takes it, and a
     * git bundle of base..HEAD in the data directory either way.
     */
    async salvageWorkspace({ runId, workspacePath, baseBranch }: { runId: string; workspacePath: string; baseBranch: string }): Promise<{ salvageRef: string | null; salvagePath: string | null; notes: string[] }> {
      const notes: string[] = [];
      const rescueRef = `svc/rescue/${runId}`;
      let salvageRef: string | null = null;
      try {
        // svc runs git on an agent's workspace here: never its hooks.
        await git(['-c', 'core.hooksPath=/dev/null', 'push', '--quiet', '--no-verify', 'origin', `HEAD:refs/heads/${rescueRef}`], { cwd: workspacePath, token: deps.githubToken });
        salvageRef = rescueRef;
      } catch (error) {
        notes.push(`rescue push refused: ${(error as Error).message}`);
      }
      let salvagePath: string | null = join(dataPaths.salvage(deps.dataDir), `${runId}.bundle`);
      try {
        mkdirSync(dirname(salvagePath), { recursive: true });
        await git(['-c', 'core.hooksPath=/dev/null', 'bundle', 'create', salvagePath, `refs/remotes/origin/${baseBranch}..HEAD`], { cwd: workspacePath });
      } catch (error) {
        notes.push(`bundle failed: ${(error as Error).message}`);
        salvagePath = null;
      }
      return { salvageRef, salvagePath, notes };
    },

    /** Opens the run's PR (or finds the one already open for its branch): never two. */
    async openPullRequest(input: { projectId: string; runId: string; branch: string; baseBranch: string; title: string; body: string }): Promise<PullRequestRef | { skipped: string }> {
      const { repo } = await projectOf(input.projectId);
      let forge: PullRequests;
      try {
        forge = new PullRequests({ apiUrl: deps.githubApiUrl, token: deps.githubToken });
      } catch (error) {
        if (error instanceof ForgeUnavailableError) return { skipped: error.message };
        throw error;
      }
      return forge.open({ owner: repo.owner, name: repo.name, head: input.branch, base: input.baseBranch, title: input.title, body: input.body });
    },

    async checkPullRequest({ prUrl }: { prUrl: string }): Promise<PullRequestRef> {
      return new PullRequests({ apiUrl: deps.githubApiUrl, token: deps.githubToken }).get(prUrl);
    },
  };
}

export type FinalizeActivities = ReturnType<typeof createFinalizeActivities>;
