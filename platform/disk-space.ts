// How much room is left on the filesystem of svc's data directory, and whether that is below the
// operator's floor (SVC_DISK_MIN_FREE_MIB, SVC_DISK_MIN_FREE_PERCENT), under which no new run is
// taken: a run that starts on a full disk fails midway, and takes the database and Temporal with it.
import { existsSync, statfsSync } from 'node:fs';
import { dirname } from 'node:path';

const MiB = 1024 * 1024;

/** The least room new runs need: both parts must hold (0 turns a part off). */
export interface DiskFloor {
  /** SVC_DISK_MIN_FREE_MIB. */
  minFreeMiB: number;
  /** SVC_DISK_MIN_FREE_PERCENT, of the filesystem's size. */
  minFreePercent: number;
}

export const DEFAULT_DISK_FLOOR: DiskFloor = { minFreeMiB: 2048, minFreePercent: 1 };

export interface FreeSpace {
  /** The directory asked about (or its nearest existing parent). */
  path: string;
  /** What an unprivileged writer may still take (statfs `bavail`, what `df` calls Avail). */
  freeBytes: number;
  totalBytes: number;
}

/** The filesystem holding `path`, or the nearest existing parent a process would create it in. */
export function freeSpace(path: string): FreeSpace {
  let existing = path;
  while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing);
  const stats = statfsSync(existing);
  return { path: existing, freeBytes: stats.bavail * stats.bsize, totalBytes: stats.blocks * stats.bsize };
}

export function belowFloor(space: FreeSpace, floor: DiskFloor): boolean {
  if (floor.minFreeMiB > 0 && space.freeBytes < floor.minFreeMiB * MiB) return true;
  return floor.minFreePercent > 0 && space.freeBytes < (space.totalBytes * floor.minFreePercent) / 100;
}

export function floorIsOff(floor: DiskFloor): boolean {
  return floor.minFreeMiB === 0 && floor.minFreePercent === 0;
}

/** Bytes as an operator reads them: `512 KiB`, `1.5 GiB`. */
export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} bytes` : `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

/** `1.5 GiB free of 250 GiB (0.6 %)`. */
export function describeFreeSpace(space: FreeSpace): string {
  const percent = space.totalBytes > 0 ? (space.freeBytes / space.totalBytes) * 100 : 0;
  const shown = percent < 10 ? percent.toFixed(1) : String(Math.round(percent));
  return `${formatBytes(space.freeBytes)} free of ${formatBytes(space.totalBytes)} (${shown} %)`;
}

/** The floor as a setting reads: `2048 MiB (SVC_DISK_MIN_FREE_MIB) or 1 % (SVC_DISK_MIN_FREE_PERCENT)`. */
export function describeFloor(floor: DiskFloor): string {
  return [
    floor.minFreeMiB > 0 && `${floor.minFreeMiB} MiB (SVC_DISK_MIN_FREE_MIB)`,
    floor.minFreePercent > 0 && `${floor.minFreePercent} % (SVC_DISK_MIN_FREE_PERCENT)`,
  ]
    .filter(Boolean)
    .join(' or ');
}

/**
 * The free space of `path`'s filesystem when it is below `floor`, else null; asked at most once per
 * `cacheMs`, so a dispatch storm costs one statfs a second. A filesystem that cannot be asked is
 * not a reason to refuse every run: the last answer stands.
 */
export function diskShortageWatch(path: string, floor: DiskFloor, cacheMs = 1000): () => FreeSpace | null {
  let last: { at: number; space: FreeSpace | null } = { at: -Infinity, space: null };
  return () => {
    if (floorIsOff(floor)) return null;
    const now = Date.now();
    if (now - last.at >= cacheMs) {
      try {
        last = { at: now, space: freeSpace(path) };
      } catch {
        last = { at: now, space: last.space };
      }
    }
    return last.space && belowFloor(last.space, floor) ? last.space : null;
  };
}
