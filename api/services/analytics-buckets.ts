// Shaping the repository's aggregates into the analytics answers: keys, rates (ratios of counts the
// database made), and bucket orders that are the same on both databases and in every locale.
import type { RunOutcomeRow } from '../../db/repositories/analytics.repository.ts';
import type { SteeringSide } from '../routes/analytics.schema.ts';

/** What a rate needs of a bucket: the per-grouping buckets and the run analytics' buckets both have it. */
type OutcomeCounts = Pick<RunOutcomeRow, 'runs' | 'succeeded' | 'failed' | 'cancelled' | 'prStateKnown' | 'prsMerged'>;

/** The key of a bucket of runs that have no value for it. */
export const NO_KEY = '__none__';

export const keyOf = (row: { key: string | null }) => row.key ?? NO_KEY;
/** part / whole, or null when there is nothing to divide by. */
export const ratio = (part: number, whole: number) => (whole > 0 ? part / whole : null);
export const terminalOf = (row: OutcomeCounts) => row.succeeded + row.failed + row.cancelled;
export const tokensOf = (row: Pick<RunOutcomeRow, 'tokens'>) => ({
  ...row.tokens,
  total: Object.values(row.tokens).reduce((a, b) => a + b, 0),
});

/** Keys in code-point order: the same whatever the locale. */
export const compareKeys = (a: { key: string }, b: { key: string }) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** Biggest spend first; ties by more runs, then by key, so the order is the same on both databases. */
export function byCost<T extends { key: string; costUsd: number; runs?: number }>(buckets: T[]): T[] {
  return buckets.sort((a, b) => b.costUsd - a.costUsd || (b.runs ?? 0) - (a.runs ?? 0) || compareKeys(a, b));
}

export function byRuns<T extends { key: string; runs: number }>(buckets: T[]): T[] {
  return buckets.sort((a, b) => b.runs - a.runs || compareKeys(a, b));
}

export function oldestFirst<T extends { key: string }>(buckets: T[]): T[] {
  return buckets.sort(compareKeys);
}

/** Success and merge rates of one side of a comparison (steered or not, edited or not…); zeros when empty. */
export function outcomeSide(row: OutcomeCounts | undefined): SteeringSide {
  if (!row)
    return { runs: 0, terminal: 0, succeeded: 0, successRate: null, prStateKnown: 0, prsMerged: 0, mergedPrRate: null };
  return {
    runs: row.runs,
    terminal: terminalOf(row),
    succeeded: row.succeeded,
    successRate: ratio(row.succeeded, terminalOf(row)),
    prStateKnown: row.prStateKnown,
    prsMerged: row.prsMerged,
    mergedPrRate: ratio(row.prsMerged, row.prStateKnown),
  };
}

/** One side per key, in the keys' order, zeros for a key no run has. */
export function outcomeSides<K extends string>(keys: readonly K[], rows: (OutcomeCounts & { key: string | null })[]) {
  return keys.map((key) => ({ key, ...outcomeSide(rows.find((row) => row.key === key)) }));
}
