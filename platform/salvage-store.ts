// Where a run's rescued work is kept when it could not be pushed: one git bundle per run in the
// data directory's salvage/ folder (0700, the file 0600). Both the API (a sandbox's own
// POST /runs/{id}/salvage) and the worker (a push svc itself could not make) keep bundles through
// this module only; in a split topology the two must share that folder (docs/architecture.md).
import { closeSync, copyFileSync, mkdirSync, openSync, readSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { dataPaths } from './config.ts';

/** Where the salvage bundle of `runId` is kept. */
export function salvageBundlePath(dataDir: string, runId: string): string {
  return join(dataPaths.salvage(dataDir), `${runId}.bundle`);
}

/** Whether `file` starts like a git bundle (v2 or v3), so nothing else is ever kept as one. */
export function isGitBundle(file: string): boolean {
  const head = fileHead(file, 20);
  return head.startsWith('# v2 git bundle') || head.startsWith('# v3 git bundle');
}

/**
 * Keeps `source` as the salvage bundle of `runId` and answers where: `move` takes a spooled upload
 * (same filesystem), `copy` leaves the source for its owner to remove. Replaces an older bundle.
 */
export function keepSalvageBundle(dataDir: string, runId: string, source: string, how: 'move' | 'copy'): string {
  const target = salvageBundlePath(dataDir, runId);
  mkdirSync(dataPaths.salvage(dataDir), { recursive: true, mode: 0o700 });
  if (how === 'move') renameSync(source, target);
  else copyFileSync(source, target);
  return target;
}

function fileHead(path: string, bytes: number): string {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    return buffer.toString('utf8', 0, readSync(fd, buffer, 0, bytes, 0));
  } finally {
    closeSync(fd);
  }
}
