// The data directory holds svc's secrets (the operator token, the read model, run tokens in launch
// specs, agents' workspaces): 0700, and everything svc writes in it 0600 (a process-wide umask, so
// SQLite, git and the embedded Temporal server create their files that way too).
import { chmodSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Applies svc's file-mode policy to this process and (re)seals the data directory. */
export function sealDataDir(dataDir: string): void {
  process.umask(0o077);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  chmodSync(dataDir, 0o700);
  // Files an older svc (or another umask) left readable to others.
  for (const name of readdirSync(dataDir)) {
    const path = join(dataDir, name);
    if (existsSync(path) && statSync(path).isFile() && (statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  }
}
