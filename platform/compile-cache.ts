// Node's compile cache for svc's own code. svc runs from TypeScript: without a cache every process
// (API, worker, CLI, each supervisor's first import) loads Node's WebAssembly type stripper and
// strips and compiles its module graph anew: ~17 MiB of resident memory kept for the process's life,
// and its start-up CPU. With Node's compile cache (keyed by Node's version and each file's content)
// a process whose modules were seen before takes the stripped code and V8's code cache from disk and
// never loads the stripper (docs/decisions/0037-process-costs.md). What is cached is code svc then runs, so the
// directory is svc's own: private, not a link, owned by svc's user (never one a sandbox can reach).
import { lstatSync, mkdirSync } from 'node:fs';
import { enableCompileCache } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

/** Node reads it at start; svc sets it for its own restarts and children (spawner, supervisors). */
const NODE_COMPILE_CACHE = 'NODE_COMPILE_CACHE';

/**
 * The cache directory: SVC_COMPILE_CACHE (empty: none), else `$XDG_CACHE_HOME/svc/node-compile-cache`
 * (`~/.cache/…`). Created private; null when it cannot be, or is not svc's own, or sits where someone
 * else could replace it (then svc runs uncached: only slower and larger, never wrong).
 */
export function compileCacheDir(env: NodeJS.ProcessEnv): string | null {
  const declared = env.SVC_COMPILE_CACHE;
  if (declared === '') return null;
  try {
    const dir = resolve(declared ?? join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'svc', 'node-compile-cache'));
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const held = lstatSync(dir);
    const own = held.isDirectory() && held.uid === process.getuid?.() && (held.mode & 0o077) === 0;
    return own && ancestorsTrusted(dir) ? dir : null;
  } catch {
    return null;
  }
}

/**
 * Whether only svc's user (or root) can replace the directory: every ancestor is a real directory
 * owned by one of them and writable by no one else, or sticky (/tmp: others cannot rename what is
 * svc's there). A root svc started with a user's HOME would otherwise keep its cache where that
 * user can swap it for code of their own.
 */
function ancestorsTrusted(dir: string): boolean {
  const uid = process.getuid?.();
  for (let path = dirname(dir); ; path = dirname(path)) {
    const held = lstatSync(path);
    const owner = held.uid === 0 || held.uid === uid;
    const sticky = (held.mode & 0o1000) !== 0;
    if (!held.isDirectory() || !owner || ((held.mode & 0o022) !== 0 && !sticky)) return false;
    if (path === dirname(path)) return true;
  }
}

/**
 * Turns the compile cache on for the rest of this process's imports and, through NODE_COMPILE_CACHE,
 * for the processes it starts (its restart under svc's flags, supervisors). Does nothing when Node
 * started with a cache already (an operator's NODE_COMPILE_CACHE, or svc's own restart).
 */
export function enableSvcCompileCache(env: NodeJS.ProcessEnv = process.env): void {
  if (env[NODE_COMPILE_CACHE]) return;
  const dir = compileCacheDir(env);
  if (!dir) return;
  enableCompileCache(dir);
  env[NODE_COMPILE_CACHE] = dir;
}
