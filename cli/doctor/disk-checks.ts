// `svc doctor --local`, the disk half: the free space of the data directory's filesystem against
// the floor below which no run starts (SVC_DISK_MIN_FREE_*), and what each area of the data
// directory takes, counted as the workspace limit counts it (platform/disk-usage.ts).
import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { dialectOf } from '../../db/orm.ts';
import type { SvcConfig } from '../../platform/config.ts';
import {
  belowFloor,
  describeFloor,
  describeFreeSpace,
  floorIsOff,
  formatBytes,
  freeSpace,
  type FreeSpace,
} from '../../platform/disk-space.ts';
import { UsageWalk } from '../../platform/disk-usage.ts';
import type { Finding } from './finding.ts';

/** How long all areas together may be walked: a data directory of millions of files still answers. */
const WALK_BUDGET_MS = 20_000;

/** The data directory's own entries, by what they hold (platform/config.ts dataPaths). */
const AREAS: Record<string, string> = {
  workspaces: 'workspaces',
  sandboxes: 'sandboxes',
  projects: 'projects',
  temporal: 'Temporal',
  logs: 'logs',
  salvage: 'salvage',
  programs: "svc's programs",
};

interface Area {
  label: string;
  bytes: number;
  /** The walk ran out of time: at least this much. */
  partial: boolean;
}

/** `disk_space` and `disk_use`: warnings, never failures (a full disk refuses runs, it breaks nothing yet). */
export function diskChecks(config: SvcConfig): Finding[] {
  let space: FreeSpace;
  try {
    space = freeSpace(config.dataDir);
  } catch (error) {
    return [{ name: 'disk_space', level: 'warn', message: `cannot read the free space: ${(error as Error).message}` }];
  }
  const floor = config.diskFloor;
  const short = belowFloor(space, floor);
  const where = `on the filesystem of ${space.path}`;
  const usage = describeAreas(measureAreas(config));
  return [
    floorIsOff(floor)
      ? {
          name: 'disk_space',
          level: 'ok',
          detail: `${describeFreeSpace(space)} ${where}; no floor (SVC_DISK_MIN_FREE_MIB and _PERCENT are 0)`,
        }
      : short
        ? {
            name: 'disk_space',
            level: 'warn',
            message: `only ${describeFreeSpace(space)} ${where}: new runs are refused below ${describeFloor(floor)}`,
            hint:
              'free space there (workspaces of ended runs are kept: remove those no longer needed), ' +
              'or give the data directory a larger disk',
          }
        : {
            name: 'disk_space',
            level: 'ok',
            detail: `${describeFreeSpace(space)} ${where}; new runs are refused below ${describeFloor(floor)}`,
          },
    // Where the room went, shown with the warning: the first thing an operator asks of a full disk.
    short ? { name: 'disk_use', level: 'warn', message: usage } : { name: 'disk_use', level: 'ok', detail: usage },
  ];
}

function describeAreas(areas: Area[]): string {
  if (!areas.length) return 'the data directory holds nothing yet';
  return areas
    .sort((a, b) => b.bytes - a.bytes)
    .map((area) => `${area.label} ${area.partial ? 'at least ' : ''}${formatBytes(area.bytes)}`)
    .join(', ');
}

/** Each top-level entry of the data directory in its area; the clones and the SQLite file where they are. */
function measureAreas(config: SvcConfig): Area[] {
  const { dataDir } = config;
  const sqlite = dialectOf(config.databaseUrl) === 'sqlite' ? config.databaseUrl : null;
  const roots: { label: string; path: string }[] = [];
  const entries = existsSync(dataDir) ? readdirSync(dataDir) : [];
  for (const entry of entries) {
    const path = join(dataDir, entry);
    const label = sqlite && path.startsWith(sqlite) ? 'read model' : (AREAS[entry] ?? 'other');
    roots.push({ label, path });
  }
  const outside = (path: string) => relative(dataDir, path).startsWith('..');
  if (outside(config.projectsRoot) && existsSync(config.projectsRoot))
    roots.push({ label: `projects (${config.projectsRoot})`, path: config.projectsRoot });
  // A SQLite file elsewhere, with its write-ahead log and shared memory beside it.
  if (sqlite && outside(sqlite) && existsSync(dirname(sqlite)))
    for (const entry of readdirSync(dirname(sqlite)).filter((name) => name.startsWith(basename(sqlite))))
      roots.push({ label: 'read model', path: join(dirname(sqlite), entry) });
  const deadline = performance.now() + WALK_BUDGET_MS;
  const areas = new Map<string, Area>();
  for (const { label, path } of roots) {
    const walk = new UsageWalk(path);
    const done = walk.step(Math.max(0, deadline - performance.now()));
    walk.close();
    const area = areas.get(label) ?? { label, bytes: 0, partial: false };
    area.bytes += walk.bytes;
    area.partial ||= !done;
    areas.set(label, area);
  }
  return [...areas.values()];
}
