// The worker's side of a preview: the supervisor of a preview sandbox listens on a port of this
// worker (the run's `previewPort`, from SVC_PREVIEW_PORT_RANGE) and on the door's socket, in the
// sandbox's socket directory (svc's, read-only inside). The door in the sandbox (preview-door.ts)
// keeps connections waiting on that socket; each browser connection is handed one, after a `G`.
// Nothing here connects to a path the sandbox could have made (a symlink to the engine's socket).
// svc's preview proxy, in the API, is the one client meant to connect: it checks the cookie first.
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { dirname } from 'node:path';
import { splice } from '../inside/wire.ts';
import { writeJsonAtomic } from './files.ts';
import type { ExposeRecord, ExposeSpec } from '../spec.ts';

/** How long a browser's connection waits for the door (a preview under load, or gone). */
const DOOR_WAIT_MS = 10_000;

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

/** The door's waiting connections, handed out one per browser connection. */
function doorPool(path: string): Promise<(timeoutMs: number) => Promise<Socket | null>> {
  const waiting: Socket[] = [];
  const asking: ((door: Socket) => void)[] = [];
  const doors = createServer((door) => {
    door.on('error', () => door.destroy());
    const take = asking.shift();
    if (take) return take(door);
    waiting.push(door);
    door.once('close', () => waiting.includes(door) && waiting.splice(waiting.indexOf(door), 1));
  });
  doors.maxConnections = 64;
  mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
  rmSync(path, { force: true });
  return new Promise((resolve, reject) => {
    doors.once('error', reject);
    doors.listen(path, () => {
      // The sandbox's uid connects to it, as to the proxies' sockets beside it.
      chmodSync(path, 0o666);
      resolve(
        (timeoutMs) =>
          new Promise((give) => {
            const door = waiting.shift();
            if (door) return give(door);
            const take = (found: Socket) => (clearTimeout(timer), give(found));
            const timer = setTimeout(() => (asking.splice(asking.indexOf(take), 1), give(null)), timeoutMs);
            asking.push(take);
          }),
      );
    });
  });
}

/**
 * Serves the door and takes the first free port of the range, starting at a place of the run's own
 * (two previews starting at once rarely try the same one; the kernel decides when they do).
 */
export async function exposePreview(spec: ExposeSpec, seed: string): Promise<ExposeRecord> {
  const nextDoor = await doorPool(spec.doorSocket);
  const size = spec.lastPort - spec.firstPort + 1;
  const start = createHash('sha256').update(seed).digest().readUInt32BE(0) % size;
  for (let step = 0; step < size; step++) {
    const port = spec.firstPort + ((start + step) % size);
    const server = createServer(async (client) => {
      client.on('error', () => client.destroy());
      client.pause();
      const door = await nextDoor(DOOR_WAIT_MS);
      if (!door || client.destroyed) return void (door?.destroy(), client.destroy());
      door.write('G');
      splice(client, door);
      client.resume();
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
