// A run's workspace: a clone of its project cut on the run's branch, or an empty scratch directory.
// The prepareWorkspace activity cuts it; since the startPreparesWorkspace patch, prepareAndStartAgent
// cuts it and starts the agent in one activity (activities/start-activities.ts).
import { execFile } from 'node:child_process';
import { existsSync, lchownSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import { ProjectEntity } from '../../db/entities/index.ts';
import type { ReadModel } from '../../db/orm.ts';
import type { ForgeCredentials } from '../../platform/forge-credentials.ts';
import type { SandboxSettings } from '../../platform/sandbox-settings.ts';
import { dropFilterShield, git, gitProbe, shieldFilters } from '../../platform/host-git.ts';
import { projectLockFile, withProjectLock } from '../../platform/project-lock.ts';
import { sandboxHostId, workspaceSharesObjects } from '../../sandbox/index.ts';

export interface WorkspaceDeps {
  readModel: ReadModel;
  projectsRoot: string;
  forgeCredentials: ForgeCredentials;
  sandbox: SandboxSettings;
}

/** What a run's workspace is cut from. */
export interface PrepareWorkspaceInput {
  runId: string;
  projectId: string | null;
  workspacePath: string;
  branch?: string | null;
  baseBranch?: string | null;
  baseCommit?: string | null;
  continueFromBranch?: string | null;
  /** A rebase round (core/pr-loop.ts): the base, fresh from the forge, merged in for the agent to finish. */
  mergeBase?: boolean;
}

export interface PreparedWorkspace {
  workspacePath: string;
  kind: 'clone' | 'scratch';
}

/**
 * A clone of the project when there is one, else an empty scratch directory. Idempotent. The
 * clone starts from the base (or the pinned commit) on the run's branch, with origin pointing
 * at GitHub, so the sandbox pushes there and nowhere else.
 */
export async function prepareRunWorkspace(
  deps: WorkspaceDeps,
  input: PrepareWorkspaceInput,
): Promise<PreparedWorkspace> {
  const { runId, projectId, workspacePath } = input;
  const project = projectId ? await deps.readModel.em().findOne(ProjectEntity, { id: projectId }) : null;
  const source = project && existsSync(join(project.localPath, '.git')) ? project.localPath : null;
  if (existsSync(workspacePath)) return { workspacePath, kind: source ? ('clone' as const) : ('scratch' as const) };
  mkdirSync(dirname(workspacePath), { recursive: true });
  const hostId = sandboxHostId(runId, deps.sandbox);
  if (!source || !project) {
    const scratch = `${workspacePath}.partial-${runId}`;
    rmSync(scratch, { recursive: true, force: true });
    mkdirSync(scratch, { recursive: true });
    // One empty directory: no `chown -R` process (forking a large worker costs ~20 ms).
    if (hostId !== null) lchownSync(scratch, hostId, hostId);
    renameSync(scratch, workspacePath);
    return { workspacePath, kind: 'scratch' as const };
  }
  // Made next to the target and renamed: a retry never sees a half-made workspace. The shared
  // project lock keeps a concurrent refresh from moving the clone under our feet.
  const partial = `${workspacePath}.partial-${runId}`;
  rmSync(partial, { recursive: true, force: true });
  const [owner, name] = source.split('/').slice(-2) as [string, string];
  const baseBranch = input.baseBranch ?? project.defaultBranch;
  // Hard links: the run costs its working tree, not the repository's history (git copies instead
  // where the two are on different filesystems).
  const shareObjects = workspaceSharesObjects(runId, deps.sandbox);
  await withProjectLock(projectLockFile(deps.projectsRoot, owner, name), 'shared', async () => {
    await git(['clone', '--quiet', ...(shareObjects ? [] : ['--no-hardlinks']), '--no-checkout', source, partial]);
    await git(['fetch', '--quiet', '--no-tags', source, '+refs/remotes/origin/*:refs/remotes/origin/*'], {
      cwd: partial,
    });
  });
  // The content checked out (the base's, or the parent run's, an agent's) names filters svc never runs.
  shieldFilters(join(partial, '.git'));
  if (input.continueFromBranch) {
    // A continuation starts from the parent's pushed work, fetched from the forge (and a rebase
    // round from the base as the forge has it now, not as the project clone last saw it).
    await git(
      [
        'fetch',
        '--quiet',
        '--no-tags',
        `${project.gitUrl}.git`,
        `+refs/heads/${input.continueFromBranch}:refs/remotes/parent/head`,
        ...(input.mergeBase ? [`+refs/heads/${baseBranch}:refs/remotes/origin/${baseBranch}`] : []),
      ],
      { cwd: partial, remote: await deps.forgeCredentials.gitRemote(owner, name) },
    );
  }
  const start = input.continueFromBranch
    ? 'refs/remotes/parent/head'
    : (input.baseCommit ?? `refs/remotes/origin/${baseBranch}`);
  if (!(await gitProbe(['rev-parse', '--verify', '--quiet', `${start}^{commit}`], { cwd: partial }))) {
    rmSync(partial, { recursive: true, force: true });
    throw ApplicationFailure.nonRetryable(
      `${input.baseCommit ? `commit ${input.baseCommit}` : `branch ${baseBranch}`} is not in the project clone ` +
        `(refresh the project?)`,
      'workspace_unavailable',
    );
  }
  await git(['checkout', '--quiet', '-B', input.branch ?? `svc/${runId}`, start], { cwd: partial });
  await git(['remote', 'set-url', 'origin', `${project.gitUrl}.git`], { cwd: partial });
  await git(['config', 'user.name', 'svc agent'], { cwd: partial });
  await git(['config', 'user.email', `${runId}@svc.invalid`], { cwd: partial });
  if (input.mergeBase && input.continueFromBranch) await startBaseMerge(partial, baseBranch);
  // From here on the workspace is the agent's: svc never runs git in it again, and its own git
  // (in the sandbox) takes the repository's attributes as they are.
  dropFilterShield(join(partial, '.git'));
  await handOver(partial, hostId);
  renameSync(partial, workspacePath);
  return { workspacePath, kind: 'clone' as const };
}

/**
 * Merges the base into a fresh workspace of a rebase round: a clean merge is committed, a conflicted
 * one is left in progress (MERGE_HEAD, conflict markers) for the agent to resolve and commit. A merge,
 * not a rebase: the round's push stays a fast-forward of the PR's branch, with no force.
 */
async function startBaseMerge(workspace: string, baseBranch: string): Promise<void> {
  const merged =
    (await gitProbe(['merge', '--no-edit', '--no-ff', `refs/remotes/origin/${baseBranch}`], { cwd: workspace })) !==
    undefined;
  if (!merged && !(await gitProbe(['rev-parse', '--verify', '--quiet', 'MERGE_HEAD'], { cwd: workspace })))
    throw ApplicationFailure.nonRetryable(`the base ${baseBranch} could not be merged in`, 'workspace_unavailable');
}

/**
 * Gives a workspace to its sandbox's host uid (svc is root), before the agent ever sees it: all but
 * the files of its object store, which may be the project clone's own (hard links). Those stay
 * root's, made 0444 (svc's umask leaves them 0400): the agent's git reads them and adds objects
 * beside them, and may unlink them, never write them.
 */
async function handOver(path: string, hostId: number | null): Promise<void> {
  if (hostId === null) return;
  // Relative to the workspace, so no character of the data directory's path is read as a pattern.
  const objectFiles = ['-path', './.git/objects/*', '-type', 'f', '-exec', 'chmod', '0444', '{}', '+'];
  const everythingElse = ['-exec', 'chown', '--no-dereference', `${hostId}:${hostId}`, '{}', '+'];
  await new Promise<void>((resolve, reject) =>
    execFile('find', ['.', ...objectFiles, '-o', ...everythingElse], { cwd: path }, (error) =>
      error ? reject(error) : resolve(),
    ),
  );
}
