// Runs first inside a sandbox (bound read-only at /run/svc/bin/init.ts): opens the sandbox's
// loopback ports onto the proxies' unix sockets, then starts the agent and ends as it ends. The
// agent may kill or replace it: that only cuts its own network; the host-side proxies decide.
// Self-contained on purpose (node: imports only): nothing else of svc is visible in the sandbox.
//   node init.ts '<listeners json>' <command> [args…]
import { spawn } from 'node:child_process';
import { openSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { constants } from 'node:os';

interface Listener {
  host: string;
  port: number;
  /** The unix socket a connection goes to. */
  socket: string;
  /** Set for a forwarded endpoint: open a CONNECT tunnel to it through the HTTP proxy first. */
  connect?: string;
}

const [configJson, command, ...args] = process.argv.slice(2);
if (!configJson || !command) {
  process.stderr.write('usage: init.ts <listeners json> <command> [args…]\n');
  process.exit(2);
}
const listeners = JSON.parse(configJson) as Listener[];

/** The same as egress-proxy.ts's: this file runs alone in the sandbox and can import nothing of svc. */
function splice(left: Socket, right: Socket): void {
  left.pipe(right);
  right.pipe(left);
  const close = () => {
    left.destroy();
    right.destroy();
  };
  for (const socket of [left, right]) {
    socket.once('error', close);
    socket.once('close', close);
  }
}

/** A tunnel through the HTTP proxy: CONNECT, wait for the 200, then hand over the stream. */
function tunnel(client: Socket, socketPath: string, destination: string): void {
  client.pause();
  const upstream = connect(socketPath);
  let header = Buffer.alloc(0);
  upstream.once('error', () => client.destroy());
  upstream.once('connect', () => upstream.write(`CONNECT ${destination} HTTP/1.1\r\nHost: ${destination}\r\n\r\n`));
  const onData = (chunk: Buffer) => {
    header = Buffer.concat([header, chunk]);
    const end = header.indexOf('\r\n\r\n');
    if (end < 0) return;
    upstream.off('data', onData);
    if (!/^HTTP\/1\.[01] 200/.test(header.toString('latin1', 0, 16))) {
      client.destroy();
      upstream.destroy();
      return;
    }
    const rest = header.subarray(end + 4);
    if (rest.length) client.write(rest);
    splice(client, upstream);
    client.resume();
  };
  upstream.on('data', onData);
}

await Promise.all(
  listeners.map(
    (listener) =>
      new Promise<void>((resolve, reject) => {
        const server = createServer((client) => {
          client.on('error', () => client.destroy());
          if (listener.connect) return tunnel(client, listener.socket, listener.connect);
          const upstream = connect(listener.socket);
          upstream.once('error', () => client.destroy());
          splice(client, upstream);
        });
        server.once('error', reject);
        server.listen(listener.port, listener.host, () => resolve());
      }),
  ),
).catch((error: Error) => {
  process.stderr.write(`svc sandbox: cannot open the sandbox's network: ${error.message}\n`);
  process.exit(125);
});

// Files the agent creates are its own business: the usual default, not the supervisor's 077.
process.umask(0o022);
// A container has no attached stdin: the agent's input (its prompt) waits in a file.
const stdinFile = process.env.SVC_INIT_STDIN;
delete process.env.SVC_INIT_STDIN;
// In a container the agent gets a process group of its own: a stop reaches all of it.
const firstProcess = process.pid === 1;
const ownGroup = firstProcess || process.env.SVC_INIT_GROUP === '1';
delete process.env.SVC_INIT_GROUP;
const agent = spawn(command, args, {
  stdio: [stdinFile ? openSync(stdinFile, 'r') : 'inherit', 'inherit', 'inherit'],
  detached: ownGroup,
});
for (const name of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
  process.on(name, () => {
    try {
      if (ownGroup && agent.pid) process.kill(-agent.pid, name);
      else agent.kill(name);
    } catch {
      // already gone
    }
  });
}
agent.once('error', (error: NodeJS.ErrnoException) => {
  // Worded as Node words it ("spawn <command> ENOENT"), which svc reads as spawn_failed.
  process.stderr.write(`svc sandbox: ${error.message}\n`);
  process.exit(error.code === 'ENOENT' ? 127 : 126);
});
agent.once('exit', (code, signal) => {
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
