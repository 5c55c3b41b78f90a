// The on-disk contract between the sandbox supervisor and the activities that watch it.
import { renameSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BackendExit } from '../spec.ts';

/** The backend would not start the sandbox (a refused create, a missing image…). */
export function startFailure(code: string, message: string): BackendExit {
  return { exitCode: null, signal: null, spawnError: { code, message }, endedAt: new Date().toISOString() };
}

export function sandboxFiles(dir: string) {
  return {
    dir,
    spec: join(dir, 'launch.json'),
    claim: join(dir, 'claim'),
    supervisor: join(dir, 'supervisor.json'),
    /** Why a supervisor crashed, if one did. */
    supervisorLog: join(dir, 'supervisor.log'),
    agent: join(dir, 'agent.json'),
    exit: join(dir, 'exit.json'),
    stdout: join(dir, 'stdout.log'),
    stderr: join(dir, 'stderr.log'),
    /** The supervisor let go of everything of this sandbox (written last: after the exit record, the cleanup). */
    released: join(dir, 'released'),
    /** svc asked for a stop: a supervisor that takes a container over honours it too. */
    stopRequested: join(dir, 'stop-requested'),
    /** How far a container's output has been copied (container backend: what a reattach skips). */
    logCursor: join(dir, 'log-cursor.json'),
    /** Egress the sandbox's proxies refused (JSON lines). */
    refusals: join(dir, 'egress-refusals.jsonl'),
    /** The run's gateway (Kubernetes backend): its port, and what the pod handed back. */
    gateway: join(dir, 'gateway.json'),
    /** The proxies' unix sockets. */
    net: join(dir, 'net'),
    /** A preview's port on this worker (preview-expose.ts). */
    exposed: join(dir, 'preview.json'),
  };
}

export type SandboxFiles = ReturnType<typeof sandboxFiles>;

export function writeJsonAtomic<T>(path: string, value: T): void {
  const temporary = `${path}.${process.pid}.tmp`;
  // svc's own records (a launch spec holds the run's token): readable by svc alone.
  writeFileSync(temporary, JSON.stringify(value), { mode: 0o600 });
  renameSync(temporary, path);
}

export function readJsonIfExists<T>(path: string): T | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
