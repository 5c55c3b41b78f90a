// A pod's way to svc (Kubernetes backend): one TCP port per run on the worker, started by the run's
// supervisor. Every connection opens with `SVC1 <token> <channel>`; the token is the run's own
// gateway secret and reaches only this run's proxies and files. Channels: the sandbox's egress and
// callback proxies (the same unix sockets a local sandbox gets), `in:<part>` (svc's copy of a part
// as tar) and `out:<part>` (the pod's copy back, unpacked as the run's own uid, then swapped in),
// both framed (pod-frames.ts): a cut transfer is never taken for a whole one.
import { spawn } from 'node:child_process';
import { timingSafeEqual } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, renameSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { basename, dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { readJsonIfExists, writeJsonAtomic } from '../../host/files.ts';
import { NETWORK_SOCKETS } from '../../network/sandbox-network.ts';
import { END_FRAME, FrameDecoder, framed } from './pod-frames.ts';
import type { GatewayPart } from '../../spec.ts';

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
/** A connection has this long, in all, to introduce itself. */
const PREAMBLE_DEADLINE_MS = 10_000;
/** A transfer that moves nothing for this long is dropped (the pod retries). */
const TRANSFER_IDLE_MS = 120_000;
/** Connections one gateway holds at once (a pod's proxies and transfers). */
const MAX_CONNECTIONS = 256;
const PROXY_CHANNELS: Record<string, string> = {
  http: NETWORK_SOCKETS.http,
  socks: NETWORK_SOCKETS.socks,
  callback: NETWORK_SOCKETS.callback,
};

/**
 * tar as the run's own uid, in `dir`: what it writes is the run's, and it can write nothing the run
 * could not. svc enters the directory (its parents are svc's own), then drops to the uid; a file
 * size limit stops a sparse file that would unpack to more than a part may hold.
 */
function tarAs(hostId: number | null, dir: string, maxBytes: number, args: string[]) {
  const limited = ['prlimit', `--fsize=${maxBytes}`, '--', 'tar', ...args];
  const argv =
    hostId === null
      ? limited
      : ['setpriv', '--reuid', `${hostId}`, '--regid', `${hostId}`, '--clear-groups', '--', ...limited];
  return spawn(argv[0]!, argv.slice(1), { cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] });
}

/** Calls `settle` once, with tar's exit code or -1 when it could not run (or was killed by a signal). */
function onTarEnd(tar: ReturnType<typeof tarAs>, settle: (code: number) => void | Promise<void>): void {
  let settled = false;
  const once = (code: number) => {
    if (settled) return;
    settled = true;
    void settle(code);
  };
  tar.once('error', () => once(-1));
  tar.once('close', (code) => once(code ?? -1));
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

/** svc's copy of a part, framed; a tar that fails resets the connection, so the pod retries. */
function sendPart(socket: Socket, spec: GatewaySpec, part: GatewayPart): void {
  const tar = tarAs(spec.hostId, part.dir, spec.maxBytes, ['-c', '--sparse', '.']);
  tar.stderr.resume();
  socket.once('error', () => tar.kill());
  tar.stdout.on('data', (chunk: Buffer) => {
    if (!socket.write(framed(chunk))) {
      tar.stdout.pause();
      socket.once('drain', () => tar.stdout.resume());
    }
  });
  // On close, not exit: all of tar's output has been read by then.
  onTarEnd(tar, (code) => void (code === 0 ? socket.end(END_FRAME) : socket.resetAndDestroy()));
}

/**
 * Unpacks a part into a directory of its own beside the run's, and swaps it in only once all of it
 * arrived (the end frame) and tar succeeded; one upload per part at a time.
 */
function receivePart(socket: Socket, spec: GatewaySpec, name: string, part: GatewayPart, record: string): void {
  const answer = (text: string) => void socket.end(`${text}\n`);
  let incoming: string;
  try {
    // A mount point (a workspace laid over a kept environment) cannot be renamed: unpack inside it.
    incoming = mkdtempSync(isMountPoint(part.dir) ? join(part.dir, '.svc-incoming-') : `${part.dir}.incoming-`);
    if (spec.hostId !== null) chownSync(incoming, spec.hostId, spec.hostId);
  } catch (error) {
    return answer(`FAILED ${(error as Error).message}`);
  }
  // No owners, modes or absolute names from the pod; GNU tar refuses `..` and makes symlinks last.
  const tar = tarAs(spec.hostId, incoming, spec.maxBytes, ['-x', '--no-same-owner', '--no-same-permissions']);
  let failure = '';
  let tarErrors = '';
  tar.stderr.on('data', (chunk: Buffer) => (tarErrors = `${tarErrors}${chunk}`.slice(-400)));
  const fail = (message: string) => {
    failure ||= message;
    tar.kill('SIGKILL');
  };
  const frames = new FrameDecoder();
  const counter = limited(spec.maxBytes);
  frames.once('error', (error) => fail(error.message));
  counter.once('error', (error) => fail(error.message));
  socket.once('error', () => fail('the connection failed'));
  tar.stdin.once('error', () => {});
  socket.pipe(frames).pipe(counter).pipe(tar.stdin);
  // Whether the pod's upload reached its end frame; tar may stop reading before it arrives.
  const whole = new Promise<boolean>((resolve) => {
    frames.once('end', () => resolve(frames.complete));
    frames.once('error', () => resolve(false));
    socket.once('close', () => resolve(frames.complete));
  });
  onTarEnd(tar, async (code) => {
    // Whatever follows tar's end of archive (its padding, the end frame) is read and dropped.
    counter.unpipe(tar.stdin);
    counter.resume();
    if (!(await whole)) failure ||= 'the transfer was cut before its end';
    if (code !== 0 || failure) {
      rmSync(incoming, { recursive: true, force: true });
      return answer(`FAILED ${failure || tarErrors.trim() || `tar ended with ${code}`}`);
    }
    try {
      swapIn(part.dir, incoming);
    } catch (error) {
      rmSync(incoming, { recursive: true, force: true });
      return answer(`FAILED ${(error as Error).message}`);
    }
    const saved = readJsonIfExists<GatewayRecord>(record)!;
    writeJsonAtomic<GatewayRecord>(record, { ...saved, handedBack: [...new Set([...saved.handedBack, name])] });
    answer('OK');
  });
}

/** Whether `dir` is the root of a file system of its own (an overlay mount), not a plain directory. */
function isMountPoint(dir: string): boolean {
  return existsSync(dir) && statSync(dir).dev !== statSync(dirname(dir)).dev;
}

/**
 * Replaces `dir` by `incoming` (the old copy removed only once the new one is in place). In a mount
 * point, `incoming` is inside it: the old entries go, then the new ones move up (one file system).
 */
function swapIn(dir: string, incoming: string): void {
  if (dirname(incoming) === dir) {
    const kept = basename(incoming);
    for (const entry of readdirSync(dir))
      if (entry !== kept) rmSync(join(dir, entry), { recursive: true, force: true });
    for (const entry of readdirSync(incoming)) renameSync(join(incoming, entry), join(dir, entry));
    rmdirSync(incoming);
    return;
  }
  const previous = `${dir}.previous`;
  rmSync(previous, { recursive: true, force: true });
  if (existsSync(dir)) renameSync(dir, previous);
  renameSync(incoming, dir);
  rmSync(previous, { recursive: true, force: true });
}

function serve(socket: Socket, spec: GatewaySpec, record: string, busy: Set<string>): void {
  let buffered = Buffer.alloc(0);
  // One deadline for the whole introduction: a byte now and then does not keep a connection.
  const deadline = setTimeout(() => socket.destroy(), PREAMBLE_DEADLINE_MS);
  socket.on('error', () => socket.destroy());
  socket.once('close', () => clearTimeout(deadline));
  const onData = (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    const end = buffered.indexOf(0x0a);
    if (end < 0) {
      if (buffered.length > PREAMBLE_MAX) socket.destroy();
      return;
    }
    socket.off('data', onData);
    socket.pause();
    clearTimeout(deadline);
    const [magic, token = '', channel = ''] = buffered.subarray(0, end).toString('latin1').split(' ');
    const rest = buffered.subarray(end + 1);
    if (magic !== 'SVC1' || !sameSecret(token, spec.token)) return socket.destroy();
    if (Object.hasOwn(PROXY_CHANNELS, channel)) {
      const upstream = connect(join(spec.socketDir, PROXY_CHANNELS[channel]!));
      upstream.once('error', () => socket.destroy());
      upstream.write(rest);
      socket.pipe(upstream).pipe(socket);
      socket.once('close', () => upstream.destroy());
      upstream.once('close', () => socket.destroy());
      return socket.resume();
    }
    const [direction, name = ''] = channel.split(':');
    const part = Object.hasOwn(spec.parts, name) ? spec.parts[name]! : undefined;
    socket.setTimeout(TRANSFER_IDLE_MS, () => socket.destroy());
    if (direction === 'in' && part?.in) return sendPart(socket, spec, part);
    if (direction === 'out' && part?.out && !busy.has(name)) {
      busy.add(name);
      socket.once('close', () => busy.delete(name));
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
  const busy = new Set<string>();
  const server = createServer({ allowHalfOpen: true }, (socket) => serve(socket, spec, record, busy));
  server.maxConnections = MAX_CONNECTIONS;
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
