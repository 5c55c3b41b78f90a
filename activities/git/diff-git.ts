// git for reading a run's change: always in a scratch repository of svc's own, on objects the
// agent wrote, so nothing in them may steer it. Over svc's host git (platform/host-git.ts: no
// system or user config, no hooks, filters or external diff), svc's attributes only (every diff,
// filter and text driver unset), no textconv, big blobs never loaded (treated as binary), a bounded
// address space, and a cap on what is read.
import { DIFF_LIMITS } from '../../core/run-diff.ts';
import { GitError, gitBounded, type BoundedOutput } from '../../platform/host-git.ts';

/** The empty tree: git's attributes are read from it where a version would read them from a tree. */
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** $GIT_DIR/info/attributes of every scratch repository: over anything a tree could say. */
export const SCRATCH_ATTRIBUTES = '* !diff !filter !merge !text !eol !working-tree-encoding !ident\n';

/** Address space one git may take (KiB, for ulimit -v): a crafted object fails it, not the worker. */
const GIT_ADDRESS_SPACE_KIB = 2 * 1024 * 1024;

const SETTINGS: [string, string][] = [
  ['attr.tree', EMPTY_TREE],
  ['diff.noprefix', 'false'],
  ['diff.mnemonicPrefix', 'false'],
  ['core.quotePath', 'false'],
  ['core.bigFileThreshold', String(DIFF_LIMITS.bigFileBytes)],
  ['core.packedGitLimit', '256m'],
  ['core.packedGitWindowSize', '16m'],
  ['core.deltaBaseCacheLimit', '32m'],
  ['diff.renameLimit', '400'],
  ['color.ui', 'false'],
];

export class DiffGitError extends Error {}

/**
 * Runs hardened git in `gitDir` (a bare repository svc made) and collects its stdout up to `cap`
 * bytes, or hands each chunk to `onChunk` (which answers false to stop git). Rejects on git's
 * failure, on a timeout, and when it ends by a signal svc did not send.
 */
export async function diffGit(
  gitDir: string,
  args: string[],
  options: { cap?: number; onChunk?: (chunk: Buffer) => boolean; timeoutMs?: number } = {},
): Promise<BoundedOutput> {
  try {
    return await gitBounded(args, {
      ...options,
      gitDir,
      settings: SETTINGS,
      env: { GIT_OPTIONAL_LOCKS: '0' },
      addressSpaceKiB: GIT_ADDRESS_SPACE_KIB,
    });
  } catch (error) {
    throw new DiffGitError(error instanceof GitError ? error.message : String(error));
  }
}

/** git whose whole (small) output is wanted, trimmed. */
export async function diffGitText(gitDir: string, args: string[]): Promise<string> {
  const { stdout, cut } = await diffGit(gitDir, args, { cap: 64 * 1024 });
  if (cut) throw new DiffGitError(`git ${args[0]} answered more than expected`);
  return stdout.toString('utf8').trim();
}
