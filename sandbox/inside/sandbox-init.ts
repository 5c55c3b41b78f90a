// Runs first inside a sandbox: opens the sandbox's loopback ports onto svc's proxies, then starts
// the agent and ends as it ends. The agent may kill or replace it: that only cuts its own network;
// the proxies on svc's side decide. One file in the sandbox (programs.ts bundles what it imports of
// wire.ts; node: imports only otherwise): nothing else of svc is visible there, and on Kubernetes
// this program is the pod's program itself.
//   node init.mjs '<listeners json>' <command> [args…]
// Local sandboxes (bubblewrap, containers) reach the proxies over unix sockets bound in. A pod
// (SVC_INIT_POD) reaches them over TCP through its run's gateway on the worker, and first fetches
// its files (workspace, home, svc's programs) from it and hands workspace, home and outbox back
// after the agent ends; its stderr lines are marked in the pod's one log stream. A pod's services
// (SVC_INIT_SERVICES, containers beside this one) are waited for before the agent starts: one not
// ready within its bound ends the pod with a line svc reads as the run's services failing.
import { spawn } from 'node:child_process';
import { mkdirSync, openSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { constants } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PodConfig, PodServiceWait, SandboxListener as Listener } from '../spec.ts';
import { END_FRAME, FRAME_MAX, framed, splice, STDERR_MARK } from './wire.ts';

/** How long a pod keeps trying to hand its files back while its gateway is away (a worker restart). */
const HAND_BACK_MS = 120_000;

const [configJson, command, ...args] = process.argv.slice(2);
if (!configJson || !command) {
  process.stderr.write('usage: init.mjs <listeners json> <command> [args…]\n');
  process.exit(2);
}
const listeners = JSON.parse(configJson) as Listener[];
const pod = process.env.SVC_INIT_POD ? (JSON.parse(process.env.SVC_INIT_POD) as PodConfig) : null;
delete process.env.SVC_INIT_POD;
const services = process.env.SVC_INIT_SERVICES ? (JSON.parse(process.env.SVC_INIT_SERVICES) as PodServiceWait[]) : [];
delete process.env.SVC_INIT_SERVICES;

function say(message: string): void {
  process[pod ? 'stdout' : 'stderr'].write(`${pod ? STDERR_MARK : ''}svc sandbox: ${message}\n`);
}

/** The same as egress-proxy.ts's: this file runs alone in the sandbox and can import nothing of svc. */
/** A connection to svc's side: a unix socket, or a gateway channel introduced by the run's token. */
function upstream(listener: { socket?: string; channel?: string }): Socket {
  if (!pod || !listener.channel) return connect(listener.socket!);
  const separator = pod.gateway.lastIndexOf(':');
  const socket = connect(Number(pod.gateway.slice(separator + 1)), pod.gateway.slice(0, separator));
  socket.write(`SVC1 ${pod.token} ${listener.channel}\n`);
  return socket;
}

/** A tunnel through the HTTP proxy: CONNECT, wait for the 200, then hand over the stream. */
function tunnel(client: Socket, listener: Listener): void {
  client.pause();
  const destination = listener.connect!;
  const proxy = upstream(listener);
  let header = Buffer.alloc(0);
  proxy.once('error', () => client.destroy());
  proxy.write(`CONNECT ${destination} HTTP/1.1\r\nHost: ${destination}\r\n\r\n`);
  const onData = (chunk: Buffer) => {
    header = Buffer.concat([header, chunk]);
    const end = header.indexOf('\r\n\r\n');
    if (end < 0) return;
    proxy.off('data', onData);
    if (!/^HTTP\/1\.[01] 200/.test(header.toString('latin1', 0, 16))) {
      client.destroy();
      proxy.destroy();
      return;
    }
    const rest = header.subarray(end + 4);
    if (rest.length) client.write(rest);
    splice(client, proxy);
    client.resume();
  };
  proxy.on('data', onData);
}

/**
 * Moves one part through the gateway with tar, framed: `in` unpacks what svc sends and counts only
 * a transfer that reached its end frame; `out` sends, ends with the end frame, and waits for svc's OK.
 */
function transfer(direction: 'in' | 'out', part: string, dir: string): Promise<void> {
  return new Promise((resolve, reject) => {
    mkdirSync(dir, { recursive: true });
    const socket = upstream({ channel: `${direction}:${part}` });
    const tar = spawn('tar', direction === 'in' ? ['-x', '-C', dir] : ['-c', '--sparse', '-C', dir, '.'], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    tar.stderr!.on('data', (chunk: Buffer) => say(`tar: ${chunk.toString().trim()}`));
    let answer = '';
    let complete = false;
    let unpacked = false;
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    const fail = (error: Error) => {
      tar.kill();
      socket.destroy();
      reject(error);
    };
    socket.once('error', fail);
    tar.once('error', fail);
    tar.stdin!.once('error', () => {});
    if (direction === 'in') {
      let pending = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        pending = Buffer.concat([pending, chunk]);
        while (!complete && pending.length >= 4) {
          const length = pending.readUInt32BE(0);
          if (length === 0) complete = true;
          else if (length > FRAME_MAX) return fail(new Error('a bad frame'));
          else if (pending.length < 4 + length) break;
          else if (!unpacked && !tar.stdin!.write(pending.subarray(4, 4 + length))) {
            socket.pause();
            tar.stdin!.once('drain', () => socket.resume());
          }
          pending = pending.subarray(4 + length);
        }
        if (!complete) return;
        tar.stdin!.end();
        // tar may finish at its end of archive before the end frame: both must have come.
        if (unpacked) resolve();
      });
      void closed.then(() => complete || fail(new Error(`${part} was cut before its end`)));
    } else {
      tar.stdout!.on('data', (chunk: Buffer) => {
        if (!socket.write(framed(chunk))) {
          tar.stdout!.pause();
          socket.once('drain', () => tar.stdout!.resume());
        }
      });
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    }
    tar.once('close', (code) => {
      if (code !== 0) return fail(new Error(`tar ${direction} ${part} ended with ${code}`));
      if (direction === 'in') {
        unpacked = true;
        if (complete) resolve();
        return;
      }
      socket.end(END_FRAME);
      void closed.then(() => (answer.startsWith('OK') ? resolve() : reject(new Error(answer.trim() || 'no answer'))));
    });
  });
}

/** Retries a transfer while the gateway is away (a worker restarting), up to a limit. */
async function persist(direction: 'in' | 'out', part: string, dir: string): Promise<boolean> {
  const deadline = Date.now() + HAND_BACK_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      await transfer(direction, part, dir);
      return true;
    } catch (error) {
      if (Date.now() > deadline) {
        say(
          `could not move ${part} ${direction === 'in' ? 'into the pod' : 'back to svc'}: ${(error as Error).message}`,
        );
        return false;
      }
      await sleep(Math.min(500 * attempt, 5000));
    }
  }
}

await Promise.all(
  listeners.map(
    (listener) =>
      new Promise<void>((resolve, reject) => {
        const server = createServer((client) => {
          client.on('error', () => client.destroy());
          if (listener.connect) return tunnel(client, listener);
          const proxy = upstream(listener);
          proxy.once('error', () => client.destroy());
          splice(client, proxy);
        });
        server.once('error', reject);
        server.listen(listener.port, listener.host, () => resolve());
      }),
  ),
).catch((error: Error) => {
  say(`cannot open the sandbox's network: ${error.message}`);
  process.exit(125);
});

// In a container the agent gets a process group of its own: a stop reaches all of it.
const firstProcess = process.pid === 1;
const ownGroup = firstProcess || process.env.SVC_INIT_GROUP === '1';
delete process.env.SVC_INIT_GROUP;
// As the first process (a pod), a signal without a handler is ignored: until the agent runs, a
// stop ends the harness at once (there is nothing to hand back yet).
let agent: ReturnType<typeof spawn> | undefined;
for (const name of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
  process.on(name, () => {
    if (!agent) process.exit(128 + (constants.signals[name] ?? 0));
    try {
      if (ownGroup && agent.pid) process.kill(-agent.pid, name);
      else agent.kill(name);
    } catch {
      // already gone
    }
  });
}

if (pod) {
  for (const { part, dir } of pod.syncIn) if (!(await persist('in', part, dir))) process.exit(125);
  // Where the agent hands things over (the finalizer's outbox) exists before it starts.
  for (const { dir } of pod.syncOut) mkdirSync(dir, { recursive: true });
}

/** Whether something accepts on the pod's loopback at this port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.setTimeout(5000, () => (socket.destroy(), resolve(false)));
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

// The services start with the pod: each is waited for from now, within its own bound.
const waitStarted = Date.now();
for (const service of services) {
  if (service.port === null) continue;
  while (!(await accepts(service.port))) {
    if (Date.now() - waitStarted > service.timeoutMs) {
      say(`service ${service.name} was not ready within ${service.timeoutMs / 1000} s`);
      process.exit(125);
    }
    await sleep(500);
  }
}

// Files the agent creates are its own business: the usual default, not the supervisor's 077.
process.umask(0o022);
// A container has no attached stdin: the agent's input (its prompt) waits in a file.
const stdinFile = process.env.SVC_INIT_STDIN;
delete process.env.SVC_INIT_STDIN;
agent = spawn(command, args, {
  stdio: [stdinFile ? openSync(stdinFile, 'r') : 'inherit', pod ? 'pipe' : 'inherit', pod ? 'pipe' : 'inherit'],
  detached: ownGroup,
});
const output = pod ? [lines(agent.stdout!, ''), lines(agent.stderr!, STDERR_MARK)] : [];

/** Copies a stream to the pod's log line by line, marked; a partial line is flushed after a pause. */
function lines(stream: NodeJS.ReadableStream, mark: string): Promise<void> {
  let pending = '';
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    if (pending) process.stdout.write(`${mark}${pending}\n`);
    pending = '';
  };
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    clearTimeout(timer);
    const parts = (pending + chunk).split('\n');
    pending = parts.pop()!;
    for (const line of parts) process.stdout.write(`${mark}${line}\n`);
    // A line without end is cut into lines of at most 64 KiB (what svc reads as one line).
    while (pending.length > FRAME_MAX) {
      process.stdout.write(`${mark}${pending.slice(0, FRAME_MAX)}\n`);
      pending = pending.slice(FRAME_MAX);
    }
    timer = setTimeout(flush, 200);
  });
  return new Promise((resolve) => stream.once('end', () => (clearTimeout(timer), flush(), resolve())));
}

agent.once('error', (error: NodeJS.ErrnoException) => {
  // Worded as Node words it ("spawn <command> ENOENT"), which svc reads as spawn_failed.
  say(error.message);
  process.exit(error.code === 'ENOENT' ? 127 : 126);
});
agent.once('exit', async (code, signal) => {
  await Promise.all(output);
  // A pod's work lives in its own volumes: it goes back to svc before the pod ends.
  if (pod) for (const { part, dir } of pod.syncOut) await persist('out', part, dir);
  if (signal && firstProcess) {
    // A container's first process ignores signals it does not handle: report it the shell's way.
    process.exit(128 + (constants.signals[signal] ?? 0));
  }
  if (signal) {
    // Die of the same signal, so whoever waits on the sandbox sees what the agent died of.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
