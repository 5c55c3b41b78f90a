// The preview's door: run inside a run's sandbox in front of its preview server (bound read-only at
// /run/svc/bin/door.mjs). A sandbox has a network of its own, so nothing outside can connect to
// the port the preview listens on; instead the door connects out, to a unix socket its supervisor
// listens on (in the sandbox's read-only socket directory, like the proxies'), and keeps a few such
// connections waiting. When a browser's connection arrives, the supervisor sends one byte, `G`, on
// a waiting one, and the door joins it to the preview's port on the sandbox's loopback. The
// supervisor never connects to anything the sandbox made. One file in the sandbox (programs.ts bundles wire.ts in).
//   node door.mjs <door socket> <port> <command> [args…]
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { constants } from 'node:os';
import { splice } from './wire.ts';

const [socketPath, portText, command, ...args] = process.argv.slice(2);
const port = Number(portText);
if (!socketPath || !command || !Number.isInteger(port) || port < 1 || port > 65535) {
  process.stderr.write('usage: door.mjs <door socket> <port> <command> [args…]\n');
  process.exit(2);
}
/** Connections kept waiting for a browser's. */
const WAITING = 4;
let ended = false;

/** One waiting connection; once used (or lost), another takes its place. */
function wait(delayMs = 0): void {
  if (ended) return;
  setTimeout(() => {
    const door = connect(socketPath);
    let used = false;
    door.once('error', () => door.destroy());
    door.once('close', () => used || wait(200));
    door.once('data', (chunk: Buffer) => {
      used = true;
      wait();
      door.pause();
      if (chunk[0] !== 0x47) return void door.destroy();
      const preview = connect(port, '127.0.0.1');
      preview.once('error', () => door.destroy());
      preview.once('connect', () => {
        if (chunk.length > 1) preview.write(chunk.subarray(1));
        splice(door, preview);
        door.resume();
      });
    });
  }, delayMs).unref();
}
for (let index = 0; index < WAITING; index++) wait();

const server = spawn(command, args, { stdio: 'inherit' });
for (const name of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(name, () => server.kill(name));
server.once('error', (error: NodeJS.ErrnoException) => {
  process.stderr.write(`svc preview: ${error.message}\n`);
  process.exit(error.code === 'ENOENT' ? 127 : 126);
});
server.once('exit', (code, signal) => {
  ended = true;
  process.exit(code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 1));
});
