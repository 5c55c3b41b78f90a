// The shared supervisor of a worker host: one detached process that supervises many sandboxes side
// by side, instead of one Node process per run (each ~60 ms of CPU to start and ~55 MiB of RSS).
// Its worker asks it over a unix socket in svc's private programs directory (supervisor-host-client.ts);
// everything else goes through the sandbox's files, as with a supervisor of its own: the claim, the
// records, `stop-requested`. A SIGTERM (what stopSandbox sends any supervisor) stops the sandboxes
// whose stop was asked, not the host. It outlives its worker, and ends once it supervises nothing
// and no worker is connected.
import { appendFileSync, chmodSync, existsSync, rmSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { dirname, join, resolve, sep } from 'node:path';
import { createInterface } from 'node:readline';
import { sandboxFiles, writeJsonAtomic, type ExitRecord, type SupervisorRecord } from './files.ts';
import { superviseSandbox, type Supervision } from './supervision.ts';

/** How long a host that supervises nothing and has no worker stays, in case its worker comes back. */
export const HOST_IDLE_EXIT_MS = 10_000;

/** One request a line: supervise this sandbox directory. The answer, a line in order: the host's pid. */
export interface HostRequest {
  supervise: string;
}
export type HostAnswer = { pid: number } | { error: string };

/** Serves the host on `socketPath` for sandboxes under `sandboxesDir`, until it is idle. */
export async function serveSupervisorHost(socketPath: string, sandboxesDir: string, self: SupervisorRecord) {
  const root = resolve(sandboxesDir);
  const hostLog = join(dirname(socketPath), 'host.log');
  const active = new Map<string, Supervision>();
  let workers = 0;
  let idleTimer: NodeJS.Timeout | null = null;

  // A crash loses every sandbox here: each one's log says why, as its own supervisor's would.
  for (const event of ['uncaughtException', 'unhandledRejection'] as const)
    process.on(event, (error: unknown) => {
      const line = `${new Date().toISOString()} shared supervisor ${event}: ${(error as Error)?.stack ?? error}\n`;
      for (const path of [hostLog, ...[...active.keys()].map((dir) => sandboxFiles(dir).supervisorLog)])
        try {
          appendFileSync(path, line, { mode: 0o600 });
        } catch {
          // a sandbox directory already gone
        }
      process.exit(70);
    });
  for (const name of ['SIGTERM', 'SIGINT'] as const)
    process.on(name, () => {
      for (const supervision of active.values()) if (existsSync(supervision.files.stopRequested)) supervision.stop();
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
      socket.write(`${JSON.stringify(dir ? { pid: self.pid } : { error: 'not a sandbox directory of this host' })}\n`);
      if (dir) void supervise(dir);
    });
  });

  async function supervise(dir: string): Promise<void> {
    if (active.has(dir)) return;
    let supervision: Supervision | null = null;
    try {
      supervision = await superviseSandbox(dir, { ...self, shared: true });
      if (!supervision) return;
      active.set(dir, supervision);
      // A stop asked before the host held it (the SIGTERM found nothing to stop).
      if (existsSync(supervision.files.stopRequested)) supervision.stop();
      await supervision.ended;
    } catch (error) {
      failed(dir, error as Error, supervision !== null);
    } finally {
      active.delete(dir);
      settle();
    }
  }

  /** Idle (nothing supervised, no worker): ends after a while, unless something comes. */
  function settle(): void {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = null;
    if (active.size || workers) return;
    idleTimer = setTimeout(() => {
      if (active.size || workers) return;
      server.close();
      process.exit(0);
    }, HOST_IDLE_EXIT_MS);
  }

  await listenOnce(server, socketPath);
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

/** A supervision that threw: said in the sandbox's log; a sandbox that never got going ends with the reason. */
function failed(dir: string, error: Error, running: boolean): void {
  const files = sandboxFiles(dir);
  try {
    appendFileSync(files.supervisorLog, `${new Date().toISOString()} ${error.stack ?? error}\n`, { mode: 0o600 });
    if (running || existsSync(files.exit) || existsSync(files.agent) || !existsSync(files.supervisor)) return;
    writeJsonAtomic<ExitRecord>(files.exit, {
      exitCode: null,
      signal: null,
      spawnError: { code: 'SUPERVISOR', message: `the supervisor could not start the sandbox: ${error.message}` },
      stoppedBySvc: false,
      endedAt: new Date().toISOString(),
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
