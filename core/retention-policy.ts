// What of a run's files its data directory may drop, and when: a pure rule, so the pass that
// applies it (activities/retention-activities.ts) only reads the run and removes.
import { isTerminalRunState, type PreviewState, type PrState, type RunState } from './run-states.ts';

/** What a retention pass removes, in the order reports list it, and how a person reads each. */
export const RETENTION_KINDS = [
  'workspaces',
  'sandboxes',
  'salvage',
  'environments',
  'runEvents',
  'lifecycleEvents',
] as const;
export type RetentionKind = (typeof RETENTION_KINDS)[number];
export const RETENTION_KIND_LABELS: Record<RetentionKind, string> = {
  workspaces: 'workspaces',
  sandboxes: 'sandbox directories',
  salvage: 'salvage bundles',
  environments: 'kept environments',
  runEvents: 'run events',
  lifecycleEvents: 'lifecycle events',
};

export interface RunRetentionFacts {
  state: RunState;
  /** When the run reached its terminal state, epoch milliseconds; null while it has not. */
  endedAtMs: number | null;
  prState: PrState | null;
  previewState: PreviewState | null;
}

export interface RunFilesRetention {
  /** Grace after the run's end for its sandbox directory, and for a workspace no open PR needs; null: kept. */
  sandboxesMs: number | null;
  /** How long a workspace whose PR is still open is kept after the run's end; null: every workspace kept. */
  workspacesMs: number | null;
}

/** A preview in these states runs from the run's workspace and its sandbox directory. */
const PREVIEW_IN_USE: ReadonlySet<PreviewState> = new Set(['starting', 'live']);

/**
 * Which of a run's directories are due for removal at `nowMs`. Nothing of a run the read model does
 * not know (null), of a run that has not ended, or of one whose preview may be running is due.
 */
export function runFilesDue(
  run: RunRetentionFacts | null,
  retention: RunFilesRetention,
  nowMs: number,
): { workspace: boolean; sandbox: boolean } {
  const keep = { workspace: false, sandbox: false };
  if (!run || !isTerminalRunState(run.state) || run.endedAtMs === null) return keep;
  if (run.previewState && PREVIEW_IN_USE.has(run.previewState)) return keep;
  const age = nowMs - run.endedAtMs;
  const past = (ms: number | null) => ms !== null && age >= ms;
  const sandbox = past(retention.sandboxesMs);
  if (retention.workspacesMs === null) return { workspace: false, sandbox };
  // An open PR may get review follow-ups a person wants to look into: its workspace stays longer.
  const workspace =
    run.prState === 'open' ? past(retention.workspacesMs) : past(retention.sandboxesMs ?? retention.workspacesMs);
  return { workspace, sandbox };
}

/** A kept repository environment as a retention pass finds it (activities/environment-cache.ts). */
export interface KeptEnvironment {
  path: string;
  /** The last time a run mounted it, epoch milliseconds. */
  lastUsedMs: number;
  /** A live mount has it as its lower layer: never removed. */
  inUse: boolean;
}

/** The kept environments due at `nowMs`: unused for `environmentsMs` and mounted by none, least recently used first. */
export function environmentsDue(entries: KeptEnvironment[], environmentsMs: number | null, nowMs: number): string[] {
  if (environmentsMs === null) return [];
  return entries
    .filter((entry) => !entry.inUse && nowMs - entry.lastUsedMs >= environmentsMs)
    .sort((a, b) => a.lastUsedMs - b.lastUsedMs)
    .map((entry) => entry.path);
}
