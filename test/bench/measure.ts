// The benches' small measuring tools: percentiles, a stopwatch, a process's resident memory.
import { readFileSync } from 'node:fs';

/** The p-th percentile (nearest rank) of unsorted values. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Milliseconds `work` took. */
export async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

/** A live process's resident set, in MiB. */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

/** A figure the bench reports: its value against a bound, with what explains it. */
export type Record = (
  name: string,
  value: number,
  target: number,
  direction: 'max' | 'min',
  detail: { [key: string]: number | string },
) => void;
