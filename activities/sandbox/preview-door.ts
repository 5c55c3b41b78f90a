// The preview's door: run inside a run's sandbox in front of its preview server (bound read-only at
// /run/svc/bin/door.mts). A sandbox has a network of its own, so nothing outside reaches the port
// the preview listens on; the door listens on a unix socket in the sandbox's hand-over directory,
// which the supervisor outside sees, and joins each connection to the preview's port on the
// sandbox's loopback. It then runs the preview's command and ends as it ends. Self-contained on
// purpose (node: imports only).
//   node door.mts <socket path> <port> <command> [args…]
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { constants } from 'node:os';

const [socketPath, portText, command, ...args] = process.argv.slice(2);
const port = Number(portText);
if (!socketPath || !command || !Number.isInteger(port) || port < 1 || port > 65535) {
  process.stderr.write('usage: door.mts <socket path> <port> <command> [args…]\n');
  process.exit(2);
}

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

rmSync(socketPath, { force: true });
const door = createServer((client) => {
  client.on('error', () => client.destroy());
  splice(client, connect(port, '127.0.0.1'));
});
door.maxConnections = 512;
await new Promise<void>((resolve, reject) => {
  door.once('error', reject);
  door.listen(socketPath, () => resolve());
}).catch((error: Error) => {
  process.stderr.write(`svc preview: cannot open the preview's door: ${error.message}\n`);
  process.exit(125);
});

const server = spawn(command, args, { stdio: 'inherit' });
for (const name of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(name, () => server.kill(name));
server.once('error', (error: NodeJS.ErrnoException) => {
  process.stderr.write(`svc preview: ${error.message}\n`);
  process.exit(error.code === 'ENOENT' ? 127 : 126);
});
server.once('exit', (code, signal) => {
  door.close();
  rmSync(socketPath, { force: true });
  process.exit(code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 1));
});
