// A memory limit for one sandbox through the kernel's memory cgroup (v1 or v2): a child of the
// worker's own cgroup, so a limit set by the host's container or service manager still applies
// above it. The kernel's OOM-kill counter for that cgroup is what makes a run `oom_killed`.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { MemoryCgroup } from '../spec.ts';

export type MemoryLimitOutcome = { enforced: true; cgroup: MemoryCgroup } | { enforced: false; reason: string };

/** The directory of this process's memory cgroup, when the machine exposes one. */
function ownMemoryCgroup(): { dir: string; version: 1 | 2 } | null {
  let lines: string[];
  try {
    lines = readFileSync('/proc/self/cgroup', 'utf8').trim().split('\n');
  } catch {
    return null;
  }
  const v1 = lines.map((line) => line.split(':')).find(([, controllers]) => controllers?.split(',').includes('memory'));
  if (v1 && existsSync('/sys/fs/cgroup/memory'))
    return { dir: join('/sys/fs/cgroup/memory', v1[2] ?? '/'), version: 1 };
  const v2 = lines.find((line) => line.startsWith('0::'));
  if (
    v2 &&
    existsSync('/sys/fs/cgroup/cgroup.controllers') &&
    readFileSync('/sys/fs/cgroup/cgroup.controllers', 'utf8').includes('memory')
  ) {
    return { dir: join('/sys/fs/cgroup', v2.slice(3)), version: 2 };
  }
  return null;
}

/** Creates (or finds, on a retry) the run's cgroup with its limit; says why when it cannot. */
export function createMemoryCgroup(runId: string, limitMiB: number): MemoryLimitOutcome {
  const own = ownMemoryCgroup();
  if (!own) return { enforced: false, reason: 'no memory cgroup controller is available' };
  const path = join(own.dir, `svc-${runId}`);
  const bytes = String(limitMiB * 1024 * 1024);
  try {
    mkdirSync(path, { recursive: true });
    if (own.version === 1) {
      writeFileSync(join(path, 'memory.limit_in_bytes'), bytes);
      // Without this the agent would swap instead of being stopped (present only with swap accounting).
      if (existsSync(join(path, 'memory.memsw.limit_in_bytes')))
        writeFileSync(join(path, 'memory.memsw.limit_in_bytes'), bytes);
    } else {
      writeFileSync(join(path, 'memory.max'), bytes);
      if (existsSync(join(path, 'memory.swap.max'))) writeFileSync(join(path, 'memory.swap.max'), '0');
    }
  } catch (error) {
    return { enforced: false, reason: `cannot set a memory limit under ${own.dir}: ${(error as Error).message}` };
  }
  return { enforced: true, cgroup: { path, version: own.version, limitMiB } };
}

/** How many times the kernel OOM-killed a process of this cgroup. */
export function oomKillCount(cgroup: MemoryCgroup): number {
  try {
    const text = readFileSync(join(cgroup.path, cgroup.version === 1 ? 'memory.oom_control' : 'memory.events'), 'utf8');
    return Number(/^oom_kill (\d+)$/m.exec(text)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/**
 * Whether the cgroup's memory use ever reached its limit. With cgroup v1 the kernel counts an OOM
 * kill only in the victim's own cgroup, which an engine removes with its container (and recent
 * kernels keep no v1 failure count): a peak at the limit is the evidence that outlives it.
 */
export function memoryLimitWasHit(cgroup: MemoryCgroup): boolean {
  const read = (name: string) => {
    try {
      return readFileSync(join(cgroup.path, name), 'utf8');
    } catch {
      return '';
    }
  };
  if (cgroup.version === 1) {
    const peak = Number(read('memory.max_usage_in_bytes'));
    return peak > 0 && peak >= Number(read('memory.limit_in_bytes'));
  }
  // v2 counts OOM kills hierarchically (`max` would count page-cache reclaim at the limit too).
  return Number(/^oom_kill (\d+)$/m.exec(read('memory.events'))?.[1] ?? 0) > 0;
}

/**
 * Removes the cgroup; answers whether it is gone. An engine given it as a container's parent makes
 * the same path in every v1 hierarchy (cpu, pids…) with its own cgroups inside (Podman's conmon):
 * those go too, deepest first.
 */
export function removeMemoryCgroup(cgroup: MemoryCgroup): boolean {
  const relative = cgroup.version === 1 ? cgroup.path.slice(V1_MEMORY_ROOT.length) : null;
  const paths =
    relative === null ? [cgroup.path] : readdirSync(V1_ROOT).map((hierarchy) => join(V1_ROOT, hierarchy, relative));
  let gone = true;
  for (const path of paths) gone = removeTree(path) && gone;
  return gone;
}

/** How long an engine's own processes (Podman's conmon) may stay in the run's cgroup after the container. */
const RELEASE_WITHIN_MS = 5000;

/** Removes the run's cgroup once it is empty (an engine's processes may leave it late), or gives up. */
export async function releaseMemoryCgroup(cgroup: MemoryCgroup): Promise<void> {
  const deadline = Date.now() + RELEASE_WITHIN_MS;
  while (!removeMemoryCgroup(cgroup) && Date.now() <= deadline) await sleep(100);
}

const V1_ROOT = '/sys/fs/cgroup';
const V1_MEMORY_ROOT = '/sys/fs/cgroup/memory';

function removeTree(path: string): boolean {
  try {
    for (const entry of readdirSync(path, { withFileTypes: true }))
      if (entry.isDirectory()) removeTree(join(path, entry.name));
    rmdirSync(path);
    return true;
  } catch (error) {
    // Still has processes (the kernel frees it with its last one), or already gone.
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/** argv that joins the cgroup before becoming the agent, so everything it starts is accounted. */
export function joinCgroupArgv(cgroup: MemoryCgroup, argv: string[]): string[] {
  return ['sh', '-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', cgroup.path, ...argv];
}
