// A repository environment's kept result (docs/decisions/0051-environment-cache.md): what one
// build's setup added to a fresh checkout of the base, and its $HOME, kept per project and key under
// `<data>/environments/<project>/<key>/{workspace,home}`, and mounted copy-on-write (a kernel
// overlayfs, svc being root) under each run that uses it: the kept tree is the lower layer, the
// run's own checkout and home the upper ones, the merged directories sit where the run's workspace
// and home always are, so the sandbox, diff, salvage and finalize read them unchanged.
import { execFile } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lchownSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { dataPaths } from '../platform/config.ts';
import { git, gitProbe } from '../platform/host-git.ts';
import type { Isolation } from '../platform/sandbox-settings.ts';

const run = promisify(execFile);

/** Where a project's kept environments are (root's only: the trees inside are world-writable for copy-up). */
export const environmentsRoot = (dataDir: string) => join(dataDir, 'environments');
export const environmentEntry = (dataDir: string, projectId: string, key: string) =>
  join(environmentsRoot(dataDir), projectId, key);
/** Where builds run: each its checkout, its setup's sandbox and home (short: the sandbox's sockets are in it). */
export const environmentBuildsDir = (dataDir: string) => join(environmentsRoot(dataDir), 'builds');
/** A build's own directory: the key's start and its workflow execution's, so that its lines are never another's. */
export const environmentBuildDir = (dataDir: string, key: string, buildRunId: string) =>
  join(environmentBuildsDir(dataDir), `${key.slice(0, 16)}-${buildRunId.slice(0, 8)}`);
/** A run's own layers over a kept environment: its checkout and home (upper) and overlayfs' work dirs. */
export const runLayers = (dataDir: string, runId: string) => join(dataDir, 'overlays', runId);
/** The agent's home a run's sandbox binds (sandbox/host/sandbox-launch.ts takes it as `home`). */
export const runHome = (dataDir: string, runId: string) => join(dataPaths.sandboxes(dataDir), runId, 'home');

/** The file in an entry (beside its two trees, seen by no run) whose mtime is the entry's last use. */
const LAST_USED = 'last-used';

/**
 * Why a run's environment is set up uncached on this worker, or null when it may use the shared
 * cache: overlayfs needs root, and the kept paths must be the ones the run sees (a sandbox's fixed
 * /workspace and /home/agent, bound by bubblewrap and containers, filled into a pod's volumes; an
 * unsandboxed process sees host paths).
 */
export function cacheRefusal(isolation: Isolation | 'unavailable'): string | null {
  if (process.getuid?.() !== 0) return 'svc is not root: no overlay mounts';
  if (isolation !== 'bubblewrap' && isolation !== 'container' && isolation !== 'kubernetes')
    return `not cached on the ${isolation} backend`;
  return null;
}

/**
 * Whether `commit` is reachable from the project's default branch as the project clone knows it:
 * only such a base may build or use the shared cache. A pinned commit or a branch elsewhere may
 * carry other files than the key's (package.json scripts) and would poison the entry.
 */
export async function onDefaultBranch(clone: string, commit: string, defaultBranch: string): Promise<boolean> {
  return (
    (await gitProbe(['merge-base', '--is-ancestor', commit, `refs/remotes/origin/${defaultBranch}`], {
      cwd: clone,
    })) !== undefined
  );
}

export const entryReady = (dataDir: string, projectId: string, key: string) =>
  existsSync(join(environmentEntry(dataDir, projectId, key), LAST_USED));

/** Records a use of an entry (retention removes the least recently used first). */
export function touchEntry(entry: string): void {
  const now = new Date();
  try {
    utimesSync(join(entry, LAST_USED), now, now);
  } catch {
    // removed meanwhile: its mount would have failed first
  }
}

export function entryLastUsedMs(entry: string): number | null {
  return statSync(join(entry, LAST_USED), { throwIfNoEntry: false })?.mtimeMs ?? null;
}

/**
 * Keeps what a build's setup added: each path of the checkout that is not in the base's tree (read
 * from the project clone, never from the checkout: its `.git` is the setup's to write) and no
 * directory of it, and the setup's home. Moved (one rename each) into a partial entry, made root's
 * with modes any uid may read and copy up (directories 0777, files 0666 or 0777: the entry's parent
 * is root's 0700, so no sandbox reaches the tree itself), then renamed in whole.
 */
export async function keepBuild(
  build: { workspace: string; home: string },
  clone: string,
  commit: string,
  entry: string,
): Promise<void> {
  if (existsSync(join(entry, LAST_USED))) return;
  const tracked = new Set<string>();
  const listing = await git(['ls-tree', '-r', '-t', '-z', '--name-only', '--full-tree', commit], { cwd: clone });
  for (const path of listing.split('\0')) if (path) tracked.add(path);
  const partial = `${entry}.partial`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(join(partial, 'workspace'), { recursive: true });
  const walk = (relative: string) => {
    for (const name of readdirSync(join(build.workspace, relative))) {
      const path = relative ? `${relative}/${name}` : name;
      if (path === '.git') continue;
      if (!tracked.has(path)) {
        mkdirSync(dirname(join(partial, 'workspace', path)), { recursive: true });
        renameSync(join(build.workspace, path), join(partial, 'workspace', path));
      } else if (lstatSync(join(build.workspace, path)).isDirectory()) walk(path);
    }
  };
  walk('');
  if (existsSync(build.home)) renameSync(build.home, join(partial, 'home'));
  else mkdirSync(join(partial, 'home'));
  unlinkFromOutside(partial);
  // Relative paths: no character of the data directory is read as an option or a pattern.
  await run('chown', ['-R', '--no-dereference', '0:0', '.'], { cwd: partial });
  await run('chmod', ['-R', 'a+rwX', '.'], { cwd: partial });
  chmodSync(partial, 0o700);
  writeFileSync(join(partial, LAST_USED), '');
  rmSync(entry, { recursive: true, force: true });
  renameSync(partial, entry);
}

/**
 * Makes every file of the kept tree that has hard links outside it a copy of its own. The setup may
 * have linked a file it did not make (the project clone's git objects, which the build's checkout
 * shares: decision 0048); the chmod that follows would otherwise reach that file through the link.
 * Links inside the tree (a package store in the home linked into node_modules) stay links.
 */
function unlinkFromOutside(root: string): void {
  const files = new Map<string, { paths: string[]; links: number }>();
  const pending = [root];
  while (pending.length) {
    const dir = pending.pop()!;
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const stats = lstatSync(path);
      if (stats.isDirectory()) pending.push(path);
      else if (stats.isFile() && stats.nlink > 1) {
        const inode = `${stats.dev}:${stats.ino}`;
        const seen = files.get(inode) ?? { paths: [], links: stats.nlink };
        seen.paths.push(path);
        files.set(inode, seen);
      }
    }
  }
  for (const { paths, links } of files.values()) {
    if (paths.length >= links) continue;
    for (const path of paths) {
      const copy = `${path}.svc-copy`;
      copyFileSync(path, copy);
      renameSync(copy, path);
    }
  }
}

/** The overlay mounts of this host's mount namespace: mount point and lower layer, as /proc reads them. */
export function overlayMounts(): { target: string; lower: string }[] {
  const mounts: { target: string; lower: string }[] = [];
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const [before, after] = line.split(' - ');
    if (!before || !after || !after.startsWith('overlay ')) continue;
    const target = unescape(before.split(' ')[4] ?? '');
    const lower = /(?:^|,)lowerdir=([^,]*)/.exec(after.split(' ')[2] ?? '')?.[1] ?? '';
    mounts.push({ target, lower: unescape(lower) });
  }
  return mounts;
}

const unescape = (path: string) => path.replace(/\\([0-7]{3})/g, (_, octal) => String.fromCharCode(parseInt(octal, 8)));

export const isMounted = (target: string) => overlayMounts().some((mount) => mount.target === target);

/** Whether a live mount has `entry`'s trees as its lower layer. */
export const entryInUse = (entry: string) =>
  overlayMounts().some((mount) => mount.lower === join(entry, 'workspace') || mount.lower === join(entry, 'home'));

/** overlayfs reads its options split at commas and colons: a path with one cannot be a layer. */
function layerPath(path: string): string {
  if (/[,:\\]/.test(path))
    throw new Error(`${path}: a path with a comma, colon or backslash cannot be an overlay layer`);
  return path;
}

async function mountOverlay(lower: string, upper: string, work: string, target: string): Promise<void> {
  const options = `lowerdir=${layerPath(lower)},upperdir=${layerPath(upper)},workdir=${layerPath(work)}`;
  await run('mount', ['-t', 'overlay', 'overlay', '-o', options, target]);
}

/** What a run's layers are over: written before the first mount, read to mount them again (a host's reboot). */
interface LayersRecord {
  entry: string;
  workspace: string;
  home: string;
}

/**
 * Mounts a run's workspace and home over a kept entry: its checkout moves (one rename) into its
 * upper layer and the merged view takes its place; its home starts empty. Idempotent: a retry, or
 * a worker after a host's reboot, mounts what is not mounted. Hard links of the checkout's objects
 * to the project clone's (0048) move with it.
 */
export async function mountRunLayers(
  dataDir: string,
  runId: string,
  entry: string,
  workspacePath: string,
  hostId: number | null,
): Promise<void> {
  const layers = runLayers(dataDir, runId);
  const record = join(layers, 'layers.json');
  if (!existsSync(record)) {
    mkdirSync(layers, { recursive: true, mode: 0o700 });
    writeFileSync(record, JSON.stringify({ entry, workspace: workspacePath, home: runHome(dataDir, runId) }));
  }
  await remountRunLayers(dataDir, runId, hostId);
  touchEntry(entry);
}

/** A run's kept environment, removed while its layers were not mounted: its workspace cannot be made whole. */
export class EnvironmentGone extends Error {}

/** One remount of a run at a time in this process: two readers at once must not mount it twice. */
const remounting = new Map<string, Promise<unknown>>();

/**
 * What every reader of a run's workspace calls first (the agent's start and restart, the finalizer,
 * a live diff, a preview): its layers mounted again when a host's reboot or an unmount lost them; a
 * run without layers is left as is. Answers null, or why its workspace cannot be whole.
 */
export async function workspaceReady(dataDir: string, runId: string, hostId: number | null): Promise<string | null> {
  const before = remounting.get(runId) ?? Promise.resolve();
  const mine = before.catch(() => undefined).then(() => remountRunLayers(dataDir, runId, hostId));
  remounting.set(runId, mine);
  try {
    await mine;
    return null;
  } catch (error) {
    if (error instanceof EnvironmentGone) return error.message;
    throw error;
  } finally {
    if (remounting.get(runId) === mine) remounting.delete(runId);
  }
}

/**
 * Mounts again whatever of a run's layers is not mounted (none for a run without them). A kept
 * entry removed meanwhile cannot be: the run fails saying so rather than see a tree without it.
 */
export async function remountRunLayers(dataDir: string, runId: string, hostId: number | null): Promise<boolean> {
  const layers = runLayers(dataDir, runId);
  let record: LayersRecord;
  try {
    record = JSON.parse(readFileSync(join(layers, 'layers.json'), 'utf8')) as LayersRecord;
  } catch {
    return false;
  }
  for (const part of ['workspace', 'home'] as const) {
    const target = record[part];
    if (isMounted(target)) continue;
    const lower = join(record.entry, part);
    if (!existsSync(lower))
      throw new EnvironmentGone(
        `the kept environment this run's ${part} is laid over was removed: its ${part} cannot be mounted again`,
      );
    const upper = join(layers, part, 'upper');
    const work = join(layers, part, 'work');
    mkdirSync(join(layers, part), { recursive: true, mode: 0o700 });
    if (!existsSync(upper)) {
      if (existsSync(target)) renameSync(target, upper);
      else {
        mkdirSync(upper, { mode: 0o700 });
        if (hostId !== null) lchownSync(upper, hostId, hostId);
      }
    }
    mkdirSync(work, { recursive: true });
    mkdirSync(target, { recursive: true });
    try {
      await mountOverlay(lower, upper, work, target);
    } catch (error) {
      // Another worker of this host mounted it meanwhile.
      if (!isMounted(target)) throw error;
    }
  }
  return true;
}

/** Unmounts a run's workspace and home if mounted (before retention removes either). */
export async function unmountRunLayers(paths: string[]): Promise<void> {
  for (const target of paths) if (isMounted(target)) await run('umount', [target]);
}

/**
 * Detaches every overlay mounted under `dir` (a data directory being removed whole, once svc has
 * stopped). Lazily: a sandbox outlives its worker by design and may still be ending in a workspace;
 * it keeps its view until it exits, and the directory can go at once.
 */
export async function detachMountsUnder(dir: string): Promise<void> {
  const prefix = `${dir.replace(/\/+$/, '')}/`;
  for (const { target } of overlayMounts().reverse())
    if (target.startsWith(prefix)) await run('umount', ['--lazy', target]);
}

/** An entry no run mounts, removed: taken out with one rename first, so a half-removed one is never used. */
export function removeEntry(entry: string, trash: string): boolean {
  if (entryInUse(entry)) return false;
  mkdirSync(trash, { recursive: true, mode: 0o700 });
  const taken = join(trash, `${Date.now()}-${process.pid}-environment`);
  try {
    renameSync(entry, taken);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  rmSync(taken, { recursive: true, force: true, maxRetries: 2 });
  return true;
}
