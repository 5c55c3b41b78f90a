// The worker's side of a preview: the supervisor of a preview sandbox listens on a port of this
// worker (the run's `previewPort`, from SVC_PREVIEW_PORT_RANGE) and joins each connection to the
// door inside the sandbox (preview-door.ts) through its unix socket. svc's preview proxy, in the
// API, is the one client meant to connect: it checks the browser's cookie first.
import { createHash } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { writeJsonAtomic } from './files.ts';

export interface ExposeSpec {
  /** The door's unix socket, as this host sees it. */
  socket: string;
  /** The address the preview is served on (SVC_PREVIEW_BIND). */
  bind: string;
  firstPort: number;
  lastPort: number;
  /** Where the port taken (or why none could be) is written: {port} or {error, message}. */
  record: string;
}

export type ExposeRecord = { port: number } | { error: 'port_exhausted'; message: string };

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

function listen(server: Server, port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const failed = () => resolve(false);
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve(true);
    });
  });
}

/**
 * Takes the first free port of the range, starting at a place of the run's own (two previews
 * starting at once rarely try the same one; the kernel decides when they do), and serves it.
 */
export async function exposePreview(spec: ExposeSpec, seed: string): Promise<ExposeRecord> {
  const size = spec.lastPort - spec.firstPort + 1;
  const start = createHash('sha256').update(seed).digest().readUInt32BE(0) % size;
  for (let step = 0; step < size; step++) {
    const port = spec.firstPort + ((start + step) % size);
    const server = createServer((client) => {
      client.on('error', () => client.destroy());
      splice(client, connect(spec.socket));
    });
    server.maxConnections = 512;
    if (await listen(server, port, spec.bind)) {
      writeJsonAtomic<ExposeRecord>(spec.record, { port });
      return { port };
    }
  }
  const record: ExposeRecord = {
    error: 'port_exhausted',
    message: `no free preview port in ${spec.firstPort}-${spec.lastPort} on ${spec.bind}`,
  };
  writeJsonAtomic(spec.record, record);
  return record;
}
