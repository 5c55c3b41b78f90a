// A run's workspace held to SVC_RUN_WORKSPACE_MAX_MIB while its agent runs, with its sandbox's
// directory (the agent's home and /tmp, its output), the other place the agent's writes land on
// the data directory's disk. The supervising activity measures them a slice at a time
// (platform/disk-usage.ts: allocated blocks, each inode once), a new pass two seconds after the
// last, so a tree of any shape costs the worker's event loop a few milliseconds per look. Over the
// limit, or holding more entries than any real workspace does, the agent is stopped and the run
// fails `workspace_too_large`.
import { UsageWalk } from '../../platform/disk-usage.ts';

const MiB = 1024 * 1024;

/** A workspace with more files and directories than this is too large, whatever their size. */
export const MAX_WORKSPACE_ENTRIES = 1_000_000;
/** How long one look may walk. */
const STEP_MS = 5;
/** How long after a finished pass the next one starts. */
const PASS_EVERY_MS = 2000;

/** What the supervising activity records when the workspace crossed its limit (kept in its heartbeat). */
export interface WorkspaceCrossing {
  /** What was counted when the walk stopped (at least this much). */
  sizeMiB: number;
  maxMiB: number;
  /** Set when it was the number of entries that crossed. */
  maxEntries?: number;
}

export interface WorkspaceSizeGuard {
  /** Walks on a slice; answers the crossing once the workspace is seen over its limit. */
  look(): WorkspaceCrossing | null;
  close(): void;
}

export function workspaceSizeGuard(paths: string[], maxMiB: number): WorkspaceSizeGuard {
  let walk: UsageWalk | null = null;
  let nextPassAt = 0;
  return {
    look() {
      if (!walk) {
        if (Date.now() < nextPassAt) return null;
        walk = new UsageWalk(paths, { stopAboveBytes: maxMiB * MiB, maxEntries: MAX_WORKSPACE_ENTRIES });
      }
      if (!walk.step(STEP_MS)) return null;
      const { bytes, cut } = walk;
      walk = null;
      nextPassAt = Date.now() + PASS_EVERY_MS;
      if (!cut) return null;
      return {
        sizeMiB: Math.floor(bytes / MiB),
        maxMiB,
        ...(cut === 'entries' ? { maxEntries: MAX_WORKSPACE_ENTRIES } : {}),
      };
    },
    close() {
      walk?.close();
      walk = null;
    },
  };
}
