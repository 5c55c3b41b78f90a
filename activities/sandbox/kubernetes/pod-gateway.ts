// A pod's way to svc (Kubernetes backend): one TCP port per run on the worker, started by the run's
// supervisor. Every connection opens with `SVC1 <token> <channel>`; the token is the run's own
// gateway secret and reaches only this run's proxies and files. Channels: the sandbox's egress and
// callback proxies (the same unix sockets a local sandbox gets), `in:<part>` (svc's copy of a part
// as tar) and `out:<part>` (the pod's copy back, unpacked as the run's own uid, then swapped in).
import { spawn } from 'node:child_process';
import { timingSafeEqual } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { readJsonIfExists, writeJsonAtomic } from '../files.ts';
import { NETWORK_SOCKETS } from '../sandbox-network.ts';

/** A directory a pod receives (`in`), hands back (`out`), or both. */
export interface GatewayPart {
  dir: string;
  in: boolean;
  out: boolean;
}

export interface GatewaySpec {
  /** Address the gateway listens on (SVC_KUBERNETES_GATEWAY_BIND). */
  bind: string;
  /** The ports it may take (the pods' NetworkPolicy opens these). */
  ports: { first: number; last: number };
  token: string;
  /** The sandbox's proxy sockets. */
  socketDir: string;
  parts: Record<string, GatewayPart>;
  /** The run's unprivileged host uid: tar reads and writes as it (null: svc is not root). */
  hostId: number | null;
  /** The most a pod may hand back in one part. */
  maxBytes: number;
}

/** What a supervisor keeps: the port pods were told (a successor listens there again), and what came back. */
export interface GatewayRecord {
  port: number;
  handedBack: string[];
}

const PREAMBLE_MAX = 512;
const PREAMBLE_TIMEOUT_MS = 10_000;
const PROXY_CHANNELS = { http: NETWORK_SOCKETS.http, socks: NETWORK_SOCKETS.socks, callback: NETWORK_SOCKETS.callback };

/**
 * tar as the run's own uid, in `dir`: what it writes is the run's, and it can write nothing the run
 * could not. svc enters the directory (its parents are svc's own), then drops to the uid.
 */
function tarAs(hostId: number | null, dir: string, args: string[]) {
  const argv =
    hostId === null
      ? ['tar', ...args]
      : ['setpriv', '--reuid', `${hostId}`, '--regid', `${hostId}`, '--clear-groups', '--', 'tar', ...args];
  const tar = spawn(argv[0]!, argv.slice(1), { cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] });
  // A failed spawn, or a kill a worker without CAP_KILL may not send to the run's uid, is the
  // transfer's failure (its exit says so), never a crash of the supervisor that serves the gateway.
  tar.on('error', () => {});
  return tar;
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Counts bytes through; past the limit it fails the stream. */
function limited(maxBytes: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      done(seen > maxBytes ? new Error(`more than ${maxBytes} bytes`) : null, chunk);
    },
  });
}

function sendPart(socket: Socket, spec: GatewaySpec, part: GatewayPart): void {
  const tar = tarAs(spec.hostId, part.dir, ['-c', '.']);
  tar.stdout.pipe(socket, { end: false });
  tar.stderr.resume();
  socket.once('error', () => tar.kill());
  // Only a whole archive ends cleanly: a failed one is reset, so the pod retries instead of unpacking half.
  tar.once('exit', (code) => (code === 0 ? socket.end() : socket.resetAndDestroy()));
}

/** Unpacks a part beside its directory and swaps it in only once all of it arrived. */
function receivePart(socket: Socket, spec: GatewaySpec, name: string, part: GatewayPart, record: string): void {
  const incoming = `${part.dir}.incoming`;
  rmSync(incoming, { recursive: true, force: true });
  mkdirSync(incoming, { mode: 0o755 });
  if (spec.hostId !== null) chownSync(incoming, spec.hostId, spec.hostId);
  // No owners, modes or absolute names from the pod; GNU tar refuses `..` and defers symlinks.
  const tar = tarAs(spec.hostId, incoming, ['-x', '--no-same-owner', '--no-same-permissions']);
  let failure = '';
  tar.stderr.on('data', (chunk: Buffer) => (failure = `${failure}${chunk}`.slice(-400)));
  const counter = limited(spec.maxBytes);
  counter.once('error', (error) => {
    failure = error.message;
    tar.kill('SIGKILL');
  });
  socket.once('error', () => tar.kill('SIGKILL'));
  socket.pipe(counter).pipe(tar.stdin);
  tar.stdin.once('error', () => {});
  tar.once('exit', (code) => {
    if (code !== 0 || failure) {
      rmSync(incoming, { recursive: true, force: true });
      return socket.end(`FAILED ${failure.trim() || `tar ended with ${code}`}\n`);
    }
    const previous = `${part.dir}.previous`;
    rmSync(previous, { recursive: true, force: true });
    if (existsSync(part.dir)) renameSync(part.dir, previous);
    renameSync(incoming, part.dir);
    rmSync(previous, { recursive: true, force: true });
    const saved = readJsonIfExists<GatewayRecord>(record)!;
    writeJsonAtomic<GatewayRecord>(record, { ...saved, handedBack: [...new Set([...saved.handedBack, name])] });
    socket.end('OK\n');
  });
}

function serve(socket: Socket, spec: GatewaySpec, record: string): void {
  let buffered = Buffer.alloc(0);
  socket.setTimeout(PREAMBLE_TIMEOUT_MS, () => socket.destroy());
  socket.on('error', () => socket.destroy());
  const onData = (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    const end = buffered.indexOf(0x0a);
    if (end < 0) {
      if (buffered.length > PREAMBLE_MAX) socket.destroy();
      return;
    }
    socket.off('data', onData);
    socket.pause();
    socket.setTimeout(0);
    const [magic, token = '', channel = ''] = buffered.subarray(0, end).toString('latin1').split(' ');
    const rest = buffered.subarray(end + 1);
    if (magic !== 'SVC1' || !sameSecret(token, spec.token)) return socket.destroy();
    const proxy = PROXY_CHANNELS[channel as keyof typeof PROXY_CHANNELS];
    if (proxy) {
      const upstream = connect(join(spec.socketDir, proxy));
      upstream.once('error', () => socket.destroy());
      upstream.write(rest);
      socket.pipe(upstream).pipe(socket);
      socket.once('close', () => upstream.destroy());
      upstream.once('close', () => socket.destroy());
      return socket.resume();
    }
    const [direction, name = ''] = channel.split(':');
    const part = Object.hasOwn(spec.parts, name) ? spec.parts[name]! : undefined;
    if (direction === 'in' && part?.in) return sendPart(socket, spec, part);
    if (direction === 'out' && part?.out) {
      socket.unshift(rest);
      return receivePart(socket, spec, name, part, record);
    }
    socket.destroy();
  };
  socket.on('data', onData);
}

/**
 * Starts the run's gateway; a successor supervisor listens on the port its predecessor recorded
 * (the pod was told that one). Answers the port and how to close.
 */
export async function startPodGateway(spec: GatewaySpec, record: string): Promise<{ port: number; server: Server }> {
  const saved = readJsonIfExists<GatewayRecord>(record);
  // Half-open: a pod ends its upload, then waits for svc's answer on the same connection.
  const server = createServer({ allowHalfOpen: true }, (socket) => serve(socket, spec, record));
  const port = saved ? await listenOn(server, spec.bind, saved.port) : await listenInRange(server, spec);
  if (!saved) writeJsonAtomic<GatewayRecord>(record, { port, handedBack: [] });
  return { port, server };
}

/**
 * Waits until a pod sandbox has handed `part` back (or ended without it): what svc reads of a pod's
 * outbox is there only once the pod sent it. Answers at once for a sandbox that is not a pod.
 */
export async function handedBack(
  files: { gateway: string; exit: string },
  part: string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const record = readJsonIfExists<GatewayRecord>(files.gateway);
    if (!record || record.handedBack.includes(part) || existsSync(files.exit)) return;
    await sleep(100);
  }
}

function listenOn(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host }, () => {
      server.off('error', reject);
      resolve(port);
    });
  });
}

/** A free port of the range, tried from a random start (many gateways per worker). */
async function listenInRange(server: Server, spec: GatewaySpec): Promise<number> {
  const { first, last } = spec.ports;
  const size = last - first + 1;
  const start = Math.floor(Math.random() * size);
  for (let offset = 0; offset < size; offset++) {
    try {
      return await listenOn(server, spec.bind, first + ((start + offset) % size));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    }
  }
  throw new Error(`no free port in ${first}-${last} (SVC_KUBERNETES_GATEWAY_PORTS)`);
}
