// The shared supervisor of a worker host: one detached process that supervises many sandboxes side
// by side, instead of one Node process per run (each ~60 ms of CPU to start and ~55 MiB of RSS).
// Its worker asks it over a unix socket in svc's private programs directory (supervisor-host-client.ts);
// everything else goes through the sandbox's files, as with a supervisor of its own: the claim, the
// records, `stop-requested`. A SIGTERM (what stopSandbox sends any supervisor) stops the sandboxes
// whose stop was asked, not the host. It outlives its worker, and ends once it supervises nothing
// and no worker is connected.
import { appendFileSync, chmodSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { dirname, join, resolve, sep } from 'node:path';
import { createInterface } from 'node:readline';
import { sandboxFiles } from './files.ts';
import { MAX_SANDBOX_CONNECTIONS, MAX_SANDBOX_LOOKUPS } from '../network/proxy-limits.ts';
import { superviseSandbox, type Supervision } from './supervision.ts';
import type { SupervisorRecord } from '../spec.ts';

/** How long a host that supervises nothing and has no worker stays, in case its worker comes back. */
export const HOST_IDLE_EXIT_MS = 10_000;
/**
 * A sandbox's descriptors at its worst: its connections in and out (each capped at
 * MAX_SANDBOX_CONNECTIONS), its callbacks' few to the API, its output, its agent, its servers.
 */
const SANDBOX_DESCRIPTORS = 2 * MAX_SANDBOX_CONNECTIONS + 32;
/** The host's own: its worker connections, the modules it loads, the log. */
const HOST_DESCRIPTORS = 256;
/** Lookup threads kept for the host's own use. */
const HOST_LOOKUP_THREADS = 8;

/** One request a line: supervise this sandbox directory. The answer, a line in order: the host's pid. */
export interface HostRequest {
  supervise: string;
}
/** Its pid (it claimed the sandbox); full (ask another: supervisor-host-client.ts); or why not. */
export type HostAnswer = { pid: number } | { full: true } | { error: string };

/** Serves the host on `socketPath` for sandboxes under `sandboxesDir`, until it is idle. */
export async function serveSupervisorHost(socketPath: string, sandboxesDir: string, self: SupervisorRecord) {
  const root = resolve(sandboxesDir);
  const hostLog = new HostLog(join(dirname(socketPath), 'host.log'));
  const capacity = sandboxCapacity();
  const active = new Set<Supervision>();
  let held = 0;
  let workers = 0;
  let idleTimer: NodeJS.Timeout | null = null;

  // Each sandbox's own failures end that sandbox alone (supervision.ts). Anything that still gets
  // here is logged and left: exiting would lose every sandbox of the worker, not the one at fault.
  for (const event of ['uncaughtException', 'unhandledRejection'] as const)
    process.on(event, (error: unknown) => hostLog.write(`${event}: ${(error as Error)?.stack ?? error}`));
  for (const name of ['SIGTERM', 'SIGINT'] as const)
    process.on(name, () => {
      for (const supervision of active) if (existsSync(supervision.files.stopRequested)) supervision.stop();
    });

  const server: Server = createServer((socket) => {
    workers += 1;
    settle();
    socket.on('error', () => undefined);
    socket.once('close', () => {
      workers -= 1;
      settle();
    });
    createInterface({ input: socket }).on('line', (line) => {
      const dir = sandboxDirOf(line, root);
      const answer: HostAnswer = !dir
        ? { error: 'not a sandbox directory of this host' }
        : held >= capacity
          ? { full: true }
          : { pid: self.pid };
      // The claim is made before the first await of supervise(): the answer comes after it.
      if ('pid' in answer) void supervise(dir!);
      socket.write(`${JSON.stringify(answer)}\n`);
    });
  });

  async function supervise(dir: string): Promise<void> {
    held += 1;
    let supervision: Supervision | null = null;
    try {
      supervision = await superviseSandbox(dir, { ...self, shared: true });
      if (!supervision) return;
      active.add(supervision);
      // A stop asked before the host held it (the SIGTERM found nothing to stop).
      if (existsSync(supervision.files.stopRequested)) supervision.stop();
      await supervision.ended;
    } catch (error) {
      failed(dir, error as Error);
    } finally {
      held -= 1;
      if (supervision) active.delete(supervision);
      settle();
    }
  }

  /** Idle (nothing supervised, no worker): ends after a while, unless something comes. */
  function settle(): void {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = null;
    if (held || workers) return;
    idleTimer = setTimeout(() => {
      if (held || workers) return;
      server.close();
      process.exit(0);
    }, HOST_IDLE_EXIT_MS);
  }

  try {
    await listenOnce(server, socketPath);
  } catch (error) {
    hostLog.write(`cannot listen on ${socketPath}: ${(error as Error).message}`);
    process.exit(1);
  }
}

/** The host's own log beside its socket, capped: a fault that repeats cannot fill the disk. */
class HostLog {
  #written = 0;
  readonly #path: string;

  constructor(path: string) {
    this.#path = path;
  }

  write(text: string): void {
    if (this.#written++ >= 1000) return;
    try {
      appendFileSync(this.#path, `${new Date().toISOString()} ${text}\n`, { mode: 0o600 });
    } catch {
      // its directory pruned, a full disk
    }
  }
}

/**
 * How many sandboxes this process can hold with every one of them at its worst: SANDBOX_DESCRIPTORS
 * each, and MAX_SANDBOX_LOOKUPS of its lookup threads (a few kept for itself). Past it the worker
 * gets `full` and asks its next shared supervisor: one agent holding all it may never leaves a
 * neighbour without a descriptor or a lookup thread. The descriptor limit is the one the worker has
 * (its agents inherit it: it is not raised here); a larger `LimitNOFILE` means fewer processes.
 */
function sandboxCapacity(): number {
  let limit = 1024;
  try {
    limit = Number(/^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1] ?? limit);
  } catch {
    // not Linux's /proc: Node's usual soft limit
  }
  const byDescriptors = Math.floor((limit - HOST_DESCRIPTORS) / SANDBOX_DESCRIPTORS);
  const threads = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  const byLookups = Math.floor((threads - HOST_LOOKUP_THREADS) / MAX_SANDBOX_LOOKUPS);
  return Math.max(0, Math.min(byDescriptors, byLookups));
}

/** The sandbox directory a request names, when it is one under `root` (the worker's own), else null. */
function sandboxDirOf(line: string, root: string): string | null {
  try {
    const { supervise } = JSON.parse(line) as HostRequest;
    if (typeof supervise !== 'string') return null;
    const dir = resolve(supervise);
    return dir === supervise && dir.startsWith(`${root}${sep}`) ? dir : null;
  } catch {
    return null;
  }
}

/** A sandbox the host could not even claim (its launch spec unreadable): its log says why. */
function failed(dir: string, error: Error): void {
  try {
    appendFileSync(sandboxFiles(dir).supervisorLog, `${new Date().toISOString()} ${error.stack ?? error}\n`, {
      mode: 0o600,
    });
  } catch {
    // a sandbox directory already gone
  }
}

/** Listens on the socket; a host already answering there is left to it (this one exits). */
async function listenOnce(server: Server, socketPath: string): Promise<void> {
  if (existsSync(socketPath)) {
    const live = await new Promise<boolean>((done) => {
      const probe = connect(socketPath, () => (probe.destroy(), done(true)));
      probe.once('error', () => done(false));
    });
    if (live) process.exit(0);
    rmSync(socketPath, { force: true });
  }
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(socketPath, () => {
      chmodSync(socketPath, 0o600);
      done();
    });
  });
}
