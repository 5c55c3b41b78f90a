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

/** CPU milliseconds a live process has used so far (user + system), from /proc. */
export function processCpuMs(pid: number): number {
  // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
}

/** CPU milliseconds the whole machine has been busy (every core, idle and iowait aside), from /proc. */
export function machineBusyCpuMs(): number {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const [user, nice, system, , , irq, softirq, steal] = ticks.map(Number);
  return ((user! + nice! + system! + irq! + softirq! + steal!) * 1000) / CLOCK_TICKS_PER_SECOND;
}

// Linux's USER_HZ: 100 on every architecture Node runs svc on.
const CLOCK_TICKS_PER_SECOND = 100;
