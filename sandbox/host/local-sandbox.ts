// The local sandbox backend: one directory per run holding the launch spec, the supervisor's
// records and the agent's output. Start is idempotent and exactly-once (the supervisor's claim);
// inspection works from any worker process, including one started after the first died.
import { existsSync, mkdirSync, openSync, readSync, closeSync, fstatSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isSameProcessAlive } from '../../platform/processes.ts';
import { watchForRecords, type RecordWatch } from './record-watch.ts';
import { spawnDetached } from './spawner.ts';
import { superviseOnHost } from './supervisor-host-client.ts';
import { supervisorHost, supervisorProgram } from './supervisor-program.ts';
import { readJsonIfExists, sandboxFiles, writeJsonAtomic, type SandboxFiles } from './files.ts';
import type { AgentRecord, ExitRecord, LaunchSpec, SupervisorRecord } from '../spec.ts';

export type SandboxStatus =
  | { kind: 'starting' }
  | { kind: 'running'; supervisor: SupervisorRecord; agent: AgentRecord | undefined }
  | { kind: 'exited'; agent: AgentRecord | undefined; exit: ExitRecord }
  | { kind: 'lost'; reason: string };

/** The backend's name for the sandbox run: its container, or its supervisor on this host. */
export function sandboxRunId(supervisor: SupervisorRecord, agent: AgentRecord | undefined): string {
  if (agent?.containerId) return `container:${agent.containerId.slice(0, 12)}`;
  if (agent?.pod) return `pod:${agent.pod}`;
  // A shared supervisor holds many sandboxes: the agent's pid tells them apart.
  return supervisor.shared
    ? `local:${hostname()}:${supervisor.pid}:${agent?.pid ?? 0}`
    : `local:${hostname()}:${supervisor.pid}`;
}

export function inspectSandbox(files: SandboxFiles): SandboxStatus {
  const exit = readJsonIfExists<ExitRecord>(files.exit);
  const agent = readJsonIfExists<AgentRecord>(files.agent);
  if (exit) return { kind: 'exited', agent, exit };
  const supervisor = readJsonIfExists<SupervisorRecord>(files.supervisor);
  if (!supervisor) return existsSync(files.claim) ? { kind: 'starting' } : { kind: 'lost', reason: 'never claimed' };
  if (!isSameProcessAlive(supervisor.pid, supervisor.startTime ?? undefined)) {
    // The exit record may have landed between the two reads above.
    const lateExit = readJsonIfExists<ExitRecord>(files.exit);
    if (lateExit) return { kind: 'exited', agent: readJsonIfExists<AgentRecord>(files.agent), exit: lateExit };
    return { kind: 'lost', reason: `supervisor ${supervisor.pid} is gone without an exit record` };
  }
  // A shared supervisor lives on: one that let the sandbox go could not write its exit (a full disk).
  if (supervisor.shared && existsSync(files.released) && !existsSync(files.exit))
    return { kind: 'lost', reason: `supervisor ${supervisor.pid} let the sandbox go without an exit record` };
  return { kind: 'running', supervisor, agent };
}

/**
 * Starts the supervisor unless this sandbox was already claimed, then waits until the agent has
 * spawned (or failed to). Safe to call again after a crash: it never starts a second agent.
 */
export async function startSandbox(
  dir: string,
  spec: LaunchSpec,
  // A pod may wait for a node and its image; a local sandbox starts in a moment.
  timeoutMs = spec.pod ? 300_000 : 30_000,
): Promise<SandboxStatus> {
  const files = sandboxFiles(dir);
  mkdirSync(dir, { recursive: true });
  let supervisorPid = 0;
  if (!existsSync(files.claim)) {
    writeJsonAtomic(files.spec, spec);
    supervisorPid = await startSupervisor(dir, spec);
  }
  const started = Date.now();
  const deadline = started + timeoutMs;
  // Woken when the supervisor records the agent (or its exit): no close poll of the records while
  // Node starts the supervisor, which on a busy machine took a few ms of the worker's CPU per run.
  const landed = watchForRecords(dir, [basename(files.agent), basename(files.exit)]);
  try {
    return await awaitAgentStart(files, supervisorPid, started, deadline, landed);
  } finally {
    landed.close();
  }
}

/**
 * The worker's shared supervisor takes the sandbox when there is one and the agent is a process of
 * this host; a container, a pod or a preview (which holds a port of its own) gets a supervisor of
 * its own, as does any sandbox the shared one could not be asked for. Answers the pid of a
 * supervisor started for this sandbox alone (0: the shared one, which has claimed it by now).
 */
async function startSupervisor(dir: string, spec: LaunchSpec): Promise<number> {
  const host = spec.container || spec.pod || spec.expose ? null : supervisorHost(dir);
  if (host) {
    try {
      await superviseOnHost(host, resolve(dir));
      return 0;
    } catch {
      // a supervisor of its own, below
    }
  }
  return spawnDetached([process.execPath, '--no-warnings', supervisorProgram(dir), dir]);
}

async function awaitAgentStart(
  files: SandboxFiles,
  supervisorPid: number,
  started: number,
  deadline: number,
  landed: RecordWatch,
): Promise<SandboxStatus> {
  const never = new AbortController().signal;
  let lostSince: number | undefined;
  while (Date.now() < deadline) {
    const status = inspectSandbox(files);
    if (status.kind === 'exited' || (status.kind === 'running' && status.agent)) return status;
    if (status.kind === 'lost') {
      // A supervisor that is still starting has not claimed yet. On a busy machine Node alone may
      // take seconds to load: while the process this call started lives, it is only slow (until the
      // deadline); one that is gone, or not known, gets a moment before the sandbox counts as lost.
      if (supervisorPid > 0 && isSameProcessAlive(supervisorPid, undefined)) lostSince = undefined;
      else {
        lostSince ??= Date.now();
        if (Date.now() - lostSince > 5000) return status;
      }
    }
    // The poll stays the rule (a watch can miss events on some filesystems), the watch cuts it short.
    await landed.wait(Date.now() - started < 1000 ? 20 : 50, never);
  }
  return { kind: 'lost', reason: `the agent did not start within ${deadline - started} ms` };
}

/** A container or pod goes on without its supervisor, and a new one can take it over. */
export function outlivesSupervisor(files: SandboxFiles): boolean {
  const spec = readJsonIfExists<LaunchSpec>(files.spec);
  return Boolean(spec?.container || spec?.pod);
}

/** How many supervisors may take over one container, one after another, before the run is lost. */
export const MAX_REATTACHMENTS = 3;

/**
 * A container outlives its supervisor: when the supervisor died without recording an exit, a new
 * one takes the container over (its proxies, its output from where the last one stopped, its exit).
 * Answers whether a supervisor is watching the sandbox again. Only the container backend can.
 */
export async function reattachSandbox(dir: string, timeoutMs = 10_000): Promise<boolean> {
  const files = sandboxFiles(dir);
  if (!outlivesSupervisor(files)) return false;
  await spawnDetached([process.execPath, '--no-warnings', supervisorProgram(dir), dir, '--reattach']);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (inspectSandbox(files).kind !== 'lost') return true;
    await sleep(50);
  }
  return false;
}

/**
 * Whether the sandbox's supervisor may still touch its directory or its cgroup: its own supervisor
 * lives, or the shared one (which lives on) has not let the sandbox go yet.
 */
export function supervisorHolds(files: SandboxFiles): boolean {
  const supervisor = readJsonIfExists<SupervisorRecord>(files.supervisor);
  if (!supervisor || !isSameProcessAlive(supervisor.pid, supervisor.startTime ?? undefined)) return false;
  return !supervisor.shared || !existsSync(files.released);
}

/**
 * Asks the supervisor to stop its agent (SIGTERM to the agent's group, SIGKILL after 5 s). A shared
 * supervisor takes the SIGTERM as "look at your sandboxes' stop requests".
 */
export function stopSandbox(files: SandboxFiles): void {
  // Kept, so a supervisor that takes a container over later stops it too.
  if (existsSync(files.dir)) closeSync(openSync(files.stopRequested, 'a', 0o600));
  const supervisor = readJsonIfExists<SupervisorRecord>(files.supervisor);
  if (supervisor && isSameProcessAlive(supervisor.pid, supervisor.startTime ?? undefined))
    process.kill(supervisor.pid, 'SIGTERM');
}

/** Reads whole lines appended to a file since `offset`; a trailing partial line waits for later. */
export function readNewLines(
  path: string,
  offset: number,
  maxBytes = 1 << 20,
): { lines: { offset: number; text: string }[]; nextOffset: number } {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { lines: [], nextOffset: offset };
    throw error;
  }
  try {
    const size = fstatSync(fd).size;
    if (size <= offset) return { lines: [], nextOffset: offset };
    const buffer = Buffer.alloc(Math.min(size - offset, maxBytes));
    const read = readSync(fd, buffer, 0, buffer.length, offset);
    const lines: { offset: number; text: string }[] = [];
    let start = 0;
    for (let i = 0; i < read; i++) {
      if (buffer[i] === 0x0a) {
        lines.push({ offset: offset + start, text: buffer.toString('utf8', start, i) });
        start = i + 1;
      }
    }
    // A full buffer with no newline is one very long line: emit it rather than stall forever.
    if (lines.length === 0 && read === maxBytes) {
      return { lines: [{ offset, text: buffer.toString('utf8', 0, read) }], nextOffset: offset + read };
    }
    return { lines, nextOffset: offset + start };
  } finally {
    closeSync(fd);
  }
}

/** Whatever is left after the last newline, once the writer has exited. */
export function readRemainder(path: string, offset: number): { offset: number; text: string } | undefined {
  const { lines, nextOffset } = readNewLines(`${path}`, offset);
  if (lines.length) return undefined;
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return undefined;
  }
  try {
    const size = fstatSync(fd).size;
    if (size <= nextOffset) return undefined;
    const buffer = Buffer.alloc(size - nextOffset);
    readSync(fd, buffer, 0, buffer.length, nextOffset);
    return { offset: nextOffset, text: buffer.toString('utf8') };
  } finally {
    closeSync(fd);
  }
}
