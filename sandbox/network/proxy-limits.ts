// What one sandbox may hold of the process that serves its proxies (a supervisor may be shared by
// many sandboxes): connections in, connections out, and the plumbing between them.
import { connect, type Socket } from 'node:net';

/**
 * Connections one sandbox may hold open through its proxies, all of them together: the proxies run
 * outside its memory limit, and (a shared supervisor) beside other sandboxes' proxies.
 */
export const MAX_SANDBOX_CONNECTIONS = 256;

/** Name lookups one sandbox may have in flight: each holds a thread of a pool its neighbours share. */
export const MAX_SANDBOX_LOOKUPS = 4;

/**
 * The lookup threads of a process that serves several sandboxes' proxies (libuv's pool, 4 unless
 * told): it takes no more sandboxes than leave each its own MAX_SANDBOX_LOOKUPS, so that no
 * sandbox's lookups (of names whose server never answers, say) can hold a neighbour's.
 */
export const SHARED_LOOKUP_THREADS = 128;

/** A proxy server that takes no more of a sandbox's connections than the sandbox may hold in all. */
export function bounded<T extends { maxConnections: number }>(server: T): T {
  server.maxConnections = MAX_SANDBOX_CONNECTIONS;
  return server;
}

/**
 * The connections a sandbox's proxies hold out on its behalf: at most MAX_SANDBOX_CONNECTIONS at
 * once whatever the agent sends (pipelined requests, a tunnel a connection), every one cut when
 * the sandbox's network closes.
 */
export class OutboundConnections {
  readonly #open = new Set<Socket>();
  #closed = false;

  /** A connection out, or null when the sandbox holds all it may (or its network is closed). */
  connect(host: string, port: number): Socket | null {
    if (this.#closed || this.#open.size >= MAX_SANDBOX_CONNECTIONS) return null;
    const socket = connect({ host, port });
    this.#open.add(socket);
    socket.once('close', () => this.#open.delete(socket));
    return socket;
  }

  close(): void {
    this.#closed = true;
    for (const socket of this.#open) socket.destroy();
  }
}
