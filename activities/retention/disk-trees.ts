// Removing a directory tree an agent may have written: measured without following any link, taken
// out of use with one rename into the data directory's trash (so a pass stopped midway leaves
// nothing half-removed where a run's files were), then deleted. Links are removed, never followed.
import { lstatSync, mkdirSync, readdirSync, renameSync, rmSync, type Stats } from 'node:fs';
import { basename, join } from 'node:path';

/** Entries a measurement looks at before it answers what it has counted (a lower bound). */
const MEASURE_MAX_ENTRIES = 1_000_000;

/** Bytes a file takes on disk: its allocated blocks (a sparse file counts what it holds). */
const onDisk = (stats: Stats) => stats.blocks * 512;

/**
 * The bytes removing `path` gives back, its tree included; links count as themselves, and a file with
 * hard links elsewhere (a workspace's objects shared with its project clone) counts only once all its
 * links are in the tree. 0 when it is gone.
 */
export function treeBytes(path: string): number {
  let total = 0;
  let seen = 0;
  const linksSeen = new Map<string, number>();
  const pending = [path];
  while (pending.length && seen < MEASURE_MAX_ENTRIES) {
    const current = pending.pop()!;
    let stats: Stats;
    try {
      stats = lstatSync(current);
    } catch {
      continue;
    }
    seen++;
    if (stats.isFile() && stats.nlink > 1) {
      const inode = `${stats.dev}:${stats.ino}`;
      const links = (linksSeen.get(inode) ?? 0) + 1;
      linksSeen.set(inode, links);
      if (links === stats.nlink) total += onDisk(stats);
      continue;
    }
    total += onDisk(stats);
    if (!stats.isDirectory()) continue;
    try {
      for (const entry of readdirSync(current)) pending.push(join(current, entry));
    } catch {
      // unreadable: counted as far as it could be
    }
  }
  return total;
}

/**
 * Takes `path` out of use (one rename into `trash`) and deletes it; answers the bytes it took.
 * A tree already gone answers null. A deletion that fails halfway stays in the trash for the
 * next pass (`emptyTrash`).
 */
export function removeTree(path: string, trash: string): number | null {
  const bytes = treeBytes(path);
  mkdirSync(trash, { recursive: true, mode: 0o700 });
  const taken = join(trash, `${Date.now()}-${process.pid}-${basename(path)}`);
  let target = taken;
  try {
    renameSync(path, taken);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    // A tree on another file system than the trash (a mount inside the data directory): in place.
    if (code !== 'EXDEV') throw error;
    target = path;
  }
  rmSync(target, { recursive: true, force: true, maxRetries: 2 });
  return bytes;
}

/** Deletes what an earlier pass took out of use but did not finish deleting. */
export function emptyTrash(trash: string): void {
  let entries: string[];
  try {
    entries = readdirSync(trash);
  } catch {
    return;
  }
  for (const entry of entries) rmSync(join(trash, entry), { recursive: true, force: true, maxRetries: 2 });
}
