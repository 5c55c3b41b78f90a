// The worker's side of its shared supervisor (supervisor-host.ts): one connection per host, held
// for the worker's life (a host with a worker connected stays up), the host started on first use
// through the spawner. Anything amiss rejects, and the caller starts a supervisor of its own: at
// least once, so a sandbox may be asked twice; its claim lets only one of them start the agent.
import { connect, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import type { HostAnswer, HostRequest } from './supervisor-host.ts';
import { SHARED_LOOKUP_THREADS } from '../network/proxy-limits.ts';
import { spawnDetached } from './spawner.ts';

/** Where a worker's shared supervisor listens, what it runs, and the sandboxes it may take. */
export interface SupervisorHost {
  program: string;
  socket: string;
  sandboxes: string;
}

const ANSWER_TIMEOUT_MS = 5000;
/** A host that is not listening this long after it was started is not used (a supervisor per run is). */
const START_TIMEOUT_MS = 10_000;

/**
 * How many shared supervisors one worker may run. Each takes the sandboxes its descriptors cover
 * (supervisor-host.ts); one that is full sends the next sandbox to the next.
 */
const MAX_HOSTS = 16;

interface Connection {
  socket: Socket;
  pending: { resolve(answer: HostAnswer): void; reject(error: Error): void }[];
}

const connections = new Map<string, Promise<Connection>>();
/** Hosts that would not start, and until when they are not tried again (each try costs a start its 10 s). */
const unstartable = new Map<string, number>();
const RETRY_START_AFTER_MS = 60_000;

/** Asks a shared supervisor to supervise the sandbox in `dir`, starting one if needed; answers its pid. */
export async function superviseOnHost(host: SupervisorHost, dir: string): Promise<number> {
  for (let index = 0; index < MAX_HOSTS; index++) {
    const answer = await ask(host, index ? host.socket.replace(/\.sock$/, `-${index}.sock`) : host.socket, dir);
    if ('pid' in answer) return answer.pid;
    if ('error' in answer) throw new Error(answer.error);
  }
  throw new Error('every shared supervisor is full');
}

async function ask(host: SupervisorHost, socket: string, dir: string): Promise<HostAnswer> {
  let connecting = connections.get(socket);
  if (!connecting && (unstartable.get(socket) ?? 0) > Date.now())
    throw new Error('the shared supervisor did not start a moment ago');
  if (!connecting) {
    const forget = () => connections.get(socket) === connecting && connections.delete(socket);
    connecting = open(host, socket, forget);
    connections.set(socket, connecting);
    connecting.catch(forget);
  }
  const connection = await connecting;
  return new Promise<HostAnswer>((resolve, reject) => {
    const timer = setTimeout(() => {
      connection.socket.destroy(new Error('the shared supervisor did not answer'));
    }, ANSWER_TIMEOUT_MS);
    connection.pending.push({
      resolve: (answer) => (clearTimeout(timer), resolve(answer)),
      reject: (error) => (clearTimeout(timer), reject(error)),
    });
    connection.socket.ref();
    connection.socket.write(`${JSON.stringify({ supervise: dir } satisfies HostRequest)}\n`);
  });
}

async function open(host: SupervisorHost, path: string, forget: () => void): Promise<Connection> {
  let socket = await attempt(path);
  if (!socket) {
    // Name lookups of every sandbox's proxies share libuv's pool: a few threads each (proxy-limits.ts).
    const env = { ...process.env, UV_THREADPOOL_SIZE: String(SHARED_LOOKUP_THREADS) };
    await spawnDetached([process.execPath, '--no-warnings', host.program, '--host', path, host.sandboxes], env);
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (!socket && Date.now() < deadline) {
      await sleep(20);
      socket = await attempt(path);
    }
    if (!socket) {
      unstartable.set(path, Date.now() + RETRY_START_AFTER_MS);
      throw new Error('the shared supervisor did not start');
    }
  }
  const connection: Connection = { socket, pending: [] };
  const gone = (error?: Error) => {
    forget();
    for (const request of connection.pending.splice(0))
      request.reject(error ?? new Error('the shared supervisor left'));
  };
  socket.once('error', gone);
  socket.once('close', () => gone());
  createInterface({ input: socket }).on('line', (line) => {
    const request = connection.pending.shift();
    if (!connection.pending.length) socket.unref();
    let answer: HostAnswer;
    try {
      answer = JSON.parse(line) as HostAnswer;
    } catch {
      answer = { error: `the shared supervisor said: ${line.slice(0, 200)}` };
    }
    request?.resolve(answer);
  });
  // Held open for the worker's life, never keeping a worker that is shutting down alive.
  socket.unref();
  return connection;
}

/** A connection to the socket, or null when nothing listens there. */
function attempt(path: string): Promise<Socket | null> {
  return new Promise((resolve) => {
    const socket = connect(path);
    socket.once('connect', () => {
      socket.removeAllListeners('error');
      socket.on('error', () => undefined);
      resolve(socket);
    });
    socket.once('error', () => resolve(null));
  });
}
