// The on-disk contract between the sandbox supervisor and the activities that watch it.
import { renameSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MemoryCgroup } from './memory-cgroup.ts';
import type { NetworkSpec } from '../network/sandbox-network.ts';
import type { ContainerSpec } from '../backends/container/container-launch.ts';
import type { PodSpec } from '../backends/kubernetes/pod-launch.ts';
import type { SteeringFormat } from '../inside/steering-relay.ts';
import type { ExposeSpec } from './preview-expose.ts';

export interface LaunchSpec {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  stdin: string | null;
  /** The agent takes steering on its input in this format: svc's relay holds its stdin (steering-relay.ts). */
  steering?: SteeringFormat | null;
  /** The memory cgroup the agent runs in (the supervisor joins it before exec). */
  memoryCgroup?: MemoryCgroup | null;
  /** The sandbox's proxies, started by the supervisor before the launch (bubblewrap only). */
  network?: NetworkSpec | null;
  /** Stop the launch after this long (the finalizer: agent-configured git may try to run for ever). */
  maxLifetimeMs?: number | null;
  /** Set for the container backend: the supervisor runs this container instead of spawning argv. */
  container?: ContainerSpec | null;
  /** Set for the Kubernetes backend: the supervisor runs this pod, and the run's gateway for it. */
  pod?: PodSpec | null;
  /** A preview: the port its door (preview-door.ts) listens behind; the supervisor serves it (preview-expose.ts). */
  door?: { port: number } | null;
  expose?: ExposeSpec | null;
}

export interface SupervisorRecord {
  pid: number;
  startTime: string | null;
  /** The worker host's shared supervisor (supervisor-host.ts), which outlives this sandbox. */
  shared?: boolean;
}

export interface AgentRecord {
  /** The agent's host pid (a container's: its init process). */
  pid: number;
  /** The container the agent runs in (container backend). */
  containerId?: string;
  /** The pod the agent runs in (Kubernetes backend): namespace/name. */
  pod?: string;
  startTime: string | null;
  spawnedAt: string;
}

export interface ExitRecord {
  exitCode: number | null;
  signal: string | null;
  spawnError: { code: string; message: string } | null;
  stoppedBySvc: boolean;
  /** The kernel OOM-killed a process of the sandbox's memory cgroup. */
  oomKilled?: boolean;
  /** The backend lost the sandbox: it disappeared, its backend stopped answering, or the cluster evicted it. */
  loss?: 'vanished' | 'unreachable' | 'evicted';
  /** What the backend said about the end (the kubelet's eviction message). */
  detail?: string;
  /** A pod ended without handing its workspace back: its work is not in svc's copy. */
  notHandedBack?: boolean;
  endedAt: string;
}

/** How a backend's sandbox ended, before the supervisor adds whether svc stopped it. */
export type BackendExit = Omit<ExitRecord, 'stoppedBySvc'>;

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
