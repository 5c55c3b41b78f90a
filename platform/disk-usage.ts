// How much disk directory trees take, counted as `du` counts them: allocated blocks (a sparse file
// costs what it holds, not its length), each inode once (hard links), no symbolic link followed,
// no other filesystem entered. The walk goes in steps bounded in time and stops at a ceiling of
// entries: a tree built to be slow to walk (millions of files, deep nesting) costs its caller only
// the time it grants each step, and holds no more than one directory open at a time.
import { lstatSync, opendirSync, type Dir, type Stats } from 'node:fs';
import { join } from 'node:path';

export interface UsageWalkOptions {
  /** Stop once more than this many bytes are counted: the answer is known. */
  stopAboveBytes?: number;
  /** Stop once more than this many entries are seen. */
  maxEntries?: number;
}

/** How many entries a step handles between looks at the clock (and at least, however short its budget). */
const CLOCK_EVERY = 16;

export class UsageWalk {
  /** Bytes allocated so far: the tree's total once done and not cut. */
  bytes = 0;
  /** Files, directories and links seen so far. */
  entries = 0;
  done = false;
  /** Why the walk stopped before its end: past `stopAboveBytes` or `maxEntries`. */
  cut: 'bytes' | 'entries' | null = null;
  /** Directories the walk could not read (their contents are not counted). */
  unreadable = 0;
  readonly #options: UsageWalkOptions;
  readonly #pending: string[] = [];
  #open: { path: string; dir: Dir } | null = null;
  readonly #linked = new Set<string>();
  readonly #devices = new Set<number>();

  /** The trees at `roots` (a missing one is empty), a file shared between them counted once. */
  constructor(roots: string | string[], options: UsageWalkOptions = {}) {
    this.#options = options;
    const found = (typeof roots === 'string' ? [roots] : roots).flatMap((root) => {
      const stats = statOrNull(root);
      return stats ? [{ root, stats }] : [];
    });
    for (const { stats } of found) this.#devices.add(stats.dev);
    for (const { root, stats } of found) if (!this.done) this.#add(root, stats);
    if (!found.length) this.done = true;
  }

  /** Walks on for about `budgetMs` (a few entries at least); answers whether the walk is done. */
  step(budgetMs: number): boolean {
    const deadline = performance.now() + budgetMs;
    for (let handled = 1; !this.done; handled++) {
      this.#advance();
      if (handled % CLOCK_EVERY === 0 && performance.now() >= deadline) break;
    }
    return this.done;
  }

  /** Walks to the end (or the cut) at once. */
  finish(): this {
    this.step(Number.POSITIVE_INFINITY);
    return this;
  }

  /** Lets go of the directory being read; the walk ends where it is. */
  close(): void {
    this.#closeOpen();
    this.#pending.length = 0;
    this.done = true;
  }

  #advance(): void {
    if (!this.#open) {
      const path = this.#pending.pop();
      if (path === undefined) {
        this.done = true;
        return;
      }
      try {
        this.#open = { path, dir: opendirSync(path, { bufferSize: 64 }) };
      } catch (error) {
        // Gone since it was seen is nothing to count; unreadable is said.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.unreadable++;
      }
      return;
    }
    let name: string | null = null;
    try {
      name = this.#open.dir.readSync()?.name ?? null;
    } catch {
      this.unreadable++;
    }
    if (name === null) {
      this.#closeOpen();
      return;
    }
    const path = join(this.#open.path, name);
    const stats = statOrNull(path);
    if (stats) this.#add(path, stats);
  }

  #add(path: string, stats: Stats): void {
    this.entries++;
    // Another filesystem mounted inside is not these trees' room.
    if (!this.#devices.has(stats.dev)) return;
    if (stats.isDirectory()) this.#pending.push(path);
    else if (stats.nlink > 1) {
      const inode = `${stats.dev}:${stats.ino}`;
      if (this.#linked.has(inode)) return;
      this.#linked.add(inode);
    }
    this.bytes += stats.blocks * 512;
    const { stopAboveBytes, maxEntries } = this.#options;
    if (stopAboveBytes !== undefined && this.bytes > stopAboveBytes) this.#stop('bytes');
    else if (maxEntries !== undefined && this.entries > maxEntries) this.#stop('entries');
  }

  #stop(cut: 'bytes' | 'entries'): void {
    this.cut = cut;
    this.close();
  }

  #closeOpen(): void {
    try {
      this.#open?.dir.closeSync();
    } catch {
      // Already closed: nothing held.
    }
    this.#open = null;
  }
}

function statOrNull(path: string): Stats | null {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}
