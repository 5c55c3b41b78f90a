// git for reading a run's change: always in a scratch repository of svc's own, on objects the
// agent wrote, so nothing in them may steer it. No system or user config, svc's attributes only
// (every diff, filter and text driver unset), no external diff or textconv, no replace refs, big
// blobs never loaded (treated as binary), a bounded address space, and a cap on what is read.
import { spawn } from 'node:child_process';
import { DIFF_LIMITS } from '../../core/run-diff.ts';
import { gitEnv } from './git.ts';

/** The empty tree: git's attributes are read from it where a version would read them from a tree. */
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** $GIT_DIR/info/attributes of every scratch repository: over anything a tree could say. */
export const SCRATCH_ATTRIBUTES = '* !diff !filter !merge !text !eol !working-tree-encoding !ident\n';

/** Address space one git may take (KiB, for ulimit -v): a crafted object fails it, not the worker. */
const GIT_ADDRESS_SPACE_KIB = 2 * 1024 * 1024;

const CONFIG = [
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  'core.attributesFile=/dev/null',
  `attr.tree=${EMPTY_TREE}`,
  'diff.external=',
  'diff.noprefix=false',
  'diff.mnemonicPrefix=false',
  'core.quotePath=false',
  `core.bigFileThreshold=${DIFF_LIMITS.bigFileBytes}`,
  'core.packedGitLimit=256m',
  'core.packedGitWindowSize=16m',
  'core.deltaBaseCacheLimit=32m',
  'diff.renameLimit=400',
  'color.ui=false',
].flatMap((entry) => ['-c', entry]);

const ENV = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_ATTR_NOSYSTEM: '1',
  GIT_NO_REPLACE_OBJECTS: '1',
  GIT_OPTIONAL_LOCKS: '0',
  GIT_LFS_SKIP_SMUDGE: '1',
};

export class DiffGitError extends Error {}

export interface BoundedOutput {
  stdout: Buffer;
  /** The output went past the cap: git was stopped, `stdout` is its first `cap` bytes. */
  cut: boolean;
}

/**
 * Runs hardened git in `gitDir` (a bare repository svc made) and collects its stdout up to `cap`
 * bytes, or hands each chunk to `onChunk` (which answers false to stop git). Rejects on git's
 * failure, on a timeout, and when it ends by a signal svc did not send.
 */
export function diffGit(
  gitDir: string,
  args: string[],
  options: { cap?: number; onChunk?: (chunk: Buffer) => boolean; timeoutMs?: number } = {},
): Promise<BoundedOutput> {
  const cap = options.cap ?? 1 << 20;
  return new Promise((resolve, reject) => {
    const child = spawn(
      '/bin/sh',
      ['-c', `ulimit -v ${GIT_ADDRESS_SPACE_KIB} && exec git "$@"`, 'git', ...CONFIG, ...args],
      { cwd: gitDir, env: { ...gitEnv(undefined), ...ENV, GIT_DIR: gitDir }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const chunks: Buffer[] = [];
    let size = 0;
    let cut = false;
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.stdout.on('data', (chunk: Buffer) => {
      if (cut) return;
      if (options.onChunk) {
        if (!options.onChunk(chunk)) stop();
        return;
      }
      const room = cap - size;
      chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
      size += Math.min(chunk.length, room);
      if (chunk.length > room) stop();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString('utf8');
    });
    function stop() {
      cut = true;
      child.kill('SIGKILL');
    }
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new DiffGitError(`git could not start: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (cut) return resolve({ stdout: Buffer.concat(chunks), cut: true });
      if (code === 0) return resolve({ stdout: Buffer.concat(chunks), cut: false });
      const detail = stderr.trim().split('\n').filter(Boolean).slice(-2).join(' / ');
      reject(new DiffGitError(`git ${args[0]} failed (${signal ?? `exit ${code}`}): ${detail}`));
    });
  });
}

/** git whose whole (small) output is wanted, trimmed. */
export async function diffGitText(gitDir: string, args: string[]): Promise<string> {
  const { stdout, cut } = await diffGit(gitDir, args, { cap: 64 * 1024 });
  if (cut) throw new DiffGitError(`git ${args[0]} answered more than expected`);
  return stdout.toString('utf8').trim();
}
