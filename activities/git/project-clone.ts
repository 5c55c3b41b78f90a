// The project clone: made once at registration, refreshed on demand, removed on delete. Every
// operation holds the project's lock, so a refresh never races a run cutting its workspace. Its
// content is the repository's, so nothing in it is obeyed: svc's host git (platform/host-git.ts),
// and every filter unset before anything is checked out.
import { existsSync, realpathSync, renameSync, rmSync, mkdirSync } from 'node:fs';
import { dirname, join, relative, isAbsolute } from 'node:path';
import { git, gitProbe, shieldFilters, type ForgeRemote } from '../../platform/host-git.ts';

export class ProjectCloneError extends Error {}
/** The ref asked for is neither a branch of the remote nor a commit of the clone: the caller's mistake. */
export class UnknownRefError extends Error {}

export interface CloneFacts {
  localPath: string;
  defaultBranch: string;
  headSha: string;
  hasSeeds: boolean;
}

async function detectDefaultBranch(localPath: string, remote: ForgeRemote): Promise<string | undefined> {
  const read = () => gitProbe(['symbolic-ref', '--short', 'refs/remotes/origin/HEAD'], { cwd: localPath });
  let head = await read();
  if (!head) {
    await gitProbe(['remote', 'set-head', 'origin', '--auto'], { cwd: localPath, remote });
    head = await read();
  }
  return head?.replace(/^origin\//, '');
}

export async function cloneProject(input: {
  cloneUrl: string;
  localPath: string;
  defaultBranch: string | null;
  remote: ForgeRemote;
}): Promise<CloneFacts> {
  const { localPath } = input;
  if (existsSync(localPath)) throw new ProjectCloneError(`the clone directory ${localPath} already exists`);
  mkdirSync(dirname(localPath), { recursive: true });
  const partial = `${localPath}.partial`;
  rmSync(partial, { recursive: true, force: true });
  try {
    // Checked out only once the filters are shielded.
    await git(['clone', '--quiet', '--no-tags', '--no-checkout', input.cloneUrl, partial], { remote: input.remote });
    shieldFilters(join(partial, '.git'));
    const detected = await detectDefaultBranch(partial, input.remote);
    const defaultBranch = input.defaultBranch ?? detected;
    if (!defaultBranch)
      throw new ProjectCloneError('could not detect the default branch (origin/HEAD); pass defaultBranch');
    if (
      defaultBranch !== detected &&
      !(await gitProbe(['rev-parse', '--verify', '--quiet', `refs/remotes/origin/${defaultBranch}`], {
        cwd: partial,
      }))
    ) {
      throw new ProjectCloneError(`branch "${defaultBranch}" does not exist in ${input.cloneUrl}`);
    }
    await git(['checkout', '--quiet', '--force', '-B', defaultBranch, `origin/${defaultBranch}`], { cwd: partial });
    renameSync(partial, localPath);
    return {
      localPath,
      defaultBranch,
      headSha: await git(['rev-parse', 'HEAD'], { cwd: localPath }),
      hasSeeds: existsSync(join(localPath, '.seeds')),
    };
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    throw error instanceof ProjectCloneError ? error : new ProjectCloneError((error as Error).message);
  }
}

/** fetch --prune, then force the work tree to the remote ref; untracked files (host-only config) survive. */
export async function refreshClone(input: {
  localPath: string;
  ref: string;
  remote: ForgeRemote;
}): Promise<{ headSha: string; hasSeeds: boolean }> {
  const { localPath, ref } = input;
  if (!existsSync(join(localPath, '.git'))) throw new ProjectCloneError(`the clone at ${localPath} is missing`);
  try {
    // A clone made before the shield existed gets it here, before its next checkout.
    shieldFilters(join(localPath, '.git'));
    await git(['fetch', '--quiet', '--prune', '--no-tags', 'origin'], { cwd: localPath, remote: input.remote });
    const remoteRef = `refs/remotes/origin/${ref}`;
    if (await gitProbe(['rev-parse', '--verify', '--quiet', remoteRef], { cwd: localPath })) {
      await git(['checkout', '--quiet', '--force', '-B', ref, `origin/${ref}`], { cwd: localPath });
      await git(['reset', '--quiet', '--hard', `origin/${ref}`], { cwd: localPath });
    } else {
      if (!(await gitProbe(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { cwd: localPath })))
        throw new UnknownRefError(`ref "${ref}" is neither a branch nor a commit of the repository`);
      await git(['checkout', '--quiet', '--force', ref], { cwd: localPath });
      await git(['reset', '--quiet', '--hard', ref], { cwd: localPath });
    }
    // The clone never commits as anyone: agents' commits happen in their own workspaces.
    await gitProbe(['config', '--local', '--unset', 'user.name'], { cwd: localPath });
    await gitProbe(['config', '--local', '--unset', 'user.email'], { cwd: localPath });
    return {
      headSha: await git(['rev-parse', 'HEAD'], { cwd: localPath }),
      hasSeeds: existsSync(join(localPath, '.seeds')),
    };
  } catch (error) {
    if (error instanceof ProjectCloneError || error instanceof UnknownRefError) throw error;
    throw new ProjectCloneError((error as Error).message);
  }
}

/** Removes a clone, refusing anything that is not strictly inside the projects root. */
export function removeClone(localPath: string, projectsRoot: string): void {
  if (!existsSync(localPath)) return;
  const root = realpathSync(projectsRoot);
  const target = realpathSync(localPath);
  const inside = relative(root, target);
  if (!inside || inside.startsWith('..') || isAbsolute(inside))
    throw new ProjectCloneError(`refusing to delete ${target}: it is not inside ${root}`);
  rmSync(target, { recursive: true, force: true });
}
