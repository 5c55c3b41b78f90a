// A run's change (GET /runs/{id}/diff), computed where its bytes are: on a worker, which holds the
// running workspace, the project clone and the salvage store, and reaches the forge. The commits
// are always read in a scratch bare repository of svc's own that borrows the clone's objects:
// while the run goes on, from a copy of the workspace's object files (git-free, workspace-objects.ts);
// after it, fetched from the forge (the pushed branch, else the rescue branch) or from the salvage
// bundle. git there is hardened (diff-git.ts): nothing the agent wrote is obeyed.
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ApplicationFailure } from '@temporalio/activity';
import { parseGitHubUrl } from '../core/git-url.ts';
import type { RunDiffAnswer, RunDiffRequest } from '../core/run-diff.ts';
import { ProjectEntity } from '../db/entities/index.ts';
import type { ReadModel } from '../db/orm.ts';
import { dataPaths } from '../platform/config.ts';
import type { ForgeCredentials } from '../platform/forge-credentials.ts';
import { salvageBundlePath } from '../platform/salvage-store.ts';
import { diffDocument } from './git/diff-document.ts';
import { DiffGitError, diffGit, diffGitText, SCRATCH_ATTRIBUTES } from './git/diff-git.ts';
import { git, gitProbe, type ForgeRemote } from '../platform/host-git.ts';
import { projectLockFile, withProjectLock } from '../platform/project-lock.ts';
import { copyWorkspaceCommits, WorkspaceObjectsError } from './git/workspace-objects.ts';
import { workspaceReady } from './environment-cache.ts';

export interface DiffActivityDeps {
  readModel: ReadModel;
  dataDir: string;
  projectsRoot: string;
  forgeCredentials: ForgeCredentials;
}

const HEAD_REF = 'refs/svc/head';
const BASE_REF = 'refs/svc/base';

const none = (reason: string): RunDiffAnswer => ({ kind: 'none', reason });

export function createDiffActivities(deps: DiffActivityDeps) {
  return {
    /** The run's change as a bounded document, or why it has none. Reads only; safe to retry. */
    async computeRunDiff(request: RunDiffRequest): Promise<RunDiffAnswer> {
      const project = await deps.readModel.em().findOne(ProjectEntity, { id: request.projectId });
      if (!project) return none('its project is deleted');
      const parsed = parseGitHubUrl(project.gitUrl);
      if (!parsed.ok) return none('its project has an unusable git URL');
      const { owner, name } = parsed.repo;
      const scratch = join(deps.dataDir, 'diff', `${request.runId}-${randomUUID().slice(0, 8)}.git`);
      try {
        return await withProjectLock(projectLockFile(deps.projectsRoot, owner, name), 'shared', async () => {
          const clone = project.localPath;
          await makeScratch(scratch, clone);
          // A live run's workspace, its layers lost to a reboot or an unmount, mounted again (their
          // upper layers exist since the first mount: no owner to give).
          const unmountable = request.live ? await workspaceReady(deps.dataDir, request.runId, null) : null;
          if (unmountable) return none(unmountable);
          const found = request.live
            ? await workspaceHead(deps.dataDir, request.runId, scratch, clone)
            : await deliveredHead(
                deps.dataDir,
                request,
                scratch,
                `${project.gitUrl}.git`,
                await deps.forgeCredentials.gitRemote(owner, name),
              );
          if (typeof found === 'string') return none(found);
          const baseBranch = request.baseBranch ?? project.defaultBranch;
          const base =
            (await gitProbe(['rev-parse', '--verify', '--quiet', `${BASE_REF}^{commit}`], { cwd: scratch })) ??
            (await gitProbe(['rev-parse', '--verify', '--quiet', `refs/remotes/origin/${baseBranch}^{commit}`], {
              cwd: clone,
            }));
          if (!base) return none(`its base branch ${baseBranch} is not in the project clone`);
          const baseCommit = await forkPoint(scratch, base, found.head);
          if (baseCommit === found.head) return none('no commits beyond its base yet');
          const { files, truncated } = await diffDocument(scratch, baseCommit, found.head);
          return { kind: 'diff', diff: { baseCommit, headCommit: found.head, source: found.source, files, truncated } };
        });
      } catch (error) {
        if (error instanceof DiffGitError || error instanceof WorkspaceObjectsError)
          throw ApplicationFailure.nonRetryable(error.message, 'diff_unavailable');
        throw error;
      } finally {
        await rm(scratch, { recursive: true, force: true });
      }
    },
  };
}

/**
 * Where the run's branch forked from its base: their merge base, and for a branch merged into the
 * base since (its PR), the merge base with the base as it was just before that merge.
 */
async function forkPoint(scratch: string, base: string, head: string): Promise<string> {
  const mergeBase = await diffGitText(scratch, ['merge-base', base, head]).catch(() => base);
  if (mergeBase !== head) return mergeBase;
  const { stdout } = await diffGit(
    scratch,
    ['rev-list', '--reverse', '--ancestry-path', '--first-parent', `${head}..${base}`],
    {
      cap: 4096,
    },
  );
  const merge = stdout.toString('utf8').split('\n')[0];
  if (!merge) return mergeBase;
  const before = await diffGitText(scratch, ['rev-parse', '--verify', '--quiet', `${merge}^1`]).catch(() => '');
  return before ? diffGitText(scratch, ['merge-base', before, head]).catch(() => mergeBase) : mergeBase;
}

type Found = { head: string; source: 'workspace' | 'branch' | 'salvage' } | string;

/** A bare repository of svc's: no template (no sample hooks), the clone's objects borrowed, svc's attributes. */
async function makeScratch(scratch: string, clone: string): Promise<void> {
  await mkdir(join(scratch, '..'), { recursive: true, mode: 0o700 });
  await git(['init', '--quiet', '--bare', '--template=', scratch]);
  const objects = resolve(clone, await git(['rev-parse', '--git-path', 'objects'], { cwd: clone }));
  await mkdir(join(scratch, 'objects', 'info'), { recursive: true });
  await writeFile(join(scratch, 'objects', 'info', 'alternates'), `${objects}\n`);
  await mkdir(join(scratch, 'info'), { recursive: true });
  await writeFile(join(scratch, 'info', 'attributes'), SCRATCH_ATTRIBUTES);
}

async function workspaceHead(dataDir: string, runId: string, scratch: string, clone: string): Promise<Found> {
  const workspace = join(dataPaths.workspaces(dataDir), runId);
  if (!existsSync(workspace)) return 'its workspace is not prepared yet';
  const packDir = join(clone, '.git', 'objects', 'pack');
  const clonePacks = new Set(existsSync(packDir) ? readdirSync(packDir) : []);
  const head = await copyWorkspaceCommits(workspace, join(scratch, 'objects'), clonePacks);
  if (!head) return 'its workspace has no commit yet';
  const readable = await diffGitText(scratch, ['cat-file', '-t', head]).catch(() => undefined);
  if (readable !== 'commit') return "its workspace's commit cannot be read yet";
  return { head, source: 'workspace' };
}

/** The pushed branch, else the rescue branch, else the salvage bundle: fetched into the scratch repository. */
async function deliveredHead(
  dataDir: string,
  request: RunDiffRequest,
  scratch: string,
  origin: string,
  remote: ForgeRemote,
): Promise<Found> {
  const fetch = (source: string, refspecs: string[]) =>
    gitProbe(['-c', 'fetch.fsckObjects=true', 'fetch', '--quiet', '--no-tags', source, ...refspecs], {
      cwd: scratch,
      remote,
      timeoutMs: 120_000,
    });
  const headOf = async () => gitProbe(['rev-parse', '--verify', '--quiet', `${HEAD_REF}^{commit}`], { cwd: scratch });
  if (request.baseBranch) await fetch(origin, [`+refs/heads/${request.baseBranch}:${BASE_REF}`]);
  for (const branch of [request.branch, request.salvageRef]) {
    if (!branch) continue;
    if ((await fetch(origin, [`+refs/heads/${branch}:${HEAD_REF}`])) !== undefined) {
      const head = await headOf();
      if (head) return { head, source: branch === request.branch ? 'branch' : 'salvage' };
    }
  }
  const bundle = salvageBundlePath(dataDir, request.runId);
  if (existsSync(bundle) && (await fetch(bundle, [`+HEAD:${HEAD_REF}`])) !== undefined) {
    const head = await headOf();
    if (head) return { head, source: 'salvage' };
  }
  return 'nothing was pushed or salvaged';
}
