// Serialises git work on one project clone across every process on the machine with the kernel's
// flock(2): writers (clone, refresh, delete) take it exclusively, readers (cutting a run's
// workspace) shared.
import { join } from 'node:path';
import { withFileLock } from './file-lock.ts';

export type { LockMode } from './file-lock.ts';

export function projectLockFile(projectsRoot: string, owner: string, name: string): string {
  return join(projectsRoot, '.locks', `${owner.toLowerCase()}__${name.toLowerCase()}.lock`);
}

export const withProjectLock = withFileLock;
