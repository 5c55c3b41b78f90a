// Small process helpers shared by the embedded launcher and the local sandbox backend.
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The kernel's start time of a process (clock ticks since boot): with the pid, it names one process. */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22; the command name (field 2) may contain spaces, so count from the closing paren.
    const afterName = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const state = afterName[0];
    if (state === 'Z' || state === 'X') return undefined;
    return afterName[19];
  } catch {
    return undefined;
  }
}

export function isSameProcessAlive(pid: number, startTime: string | undefined): boolean {
  if (!isProcessAlive(pid)) return false;
  const current = processStartTime(pid);
  if (current === undefined) return false;
  return startTime === undefined || current === startTime;
}

/** SIGTERM to the group, then SIGKILL if it has not exited in time. */
export async function terminateProcessGroup(pid: number, exited: Promise<void>, graceMs: number): Promise<void> {
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-pid, name);
    } catch {
      // group already gone
    }
  };
  signal('SIGTERM');
  const timedOut = await Promise.race([exited.then(() => false), sleep(graceMs).then(() => true)]);
  if (timedOut) {
    signal('SIGKILL');
    await exited;
  }
}
