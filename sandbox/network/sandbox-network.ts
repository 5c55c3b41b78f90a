// A sandbox's network, host side: the egress proxies and the callback proxy on unix sockets in a
// directory that is bound (alone) into the sandbox, whose own network namespace has nothing but
// loopback. Started by the sandbox's supervisor, so the network lives exactly as long as the
// agent does, through any restart of the worker.
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import type { Server, Socket } from 'node:net';
import { join } from 'node:path';
import { callbackServer } from './callback-proxy.ts';
import { EgressProxy, RefusalLog } from './egress-proxy.ts';
import { MAX_SANDBOX_CONNECTIONS, OutboundConnections } from './proxy-limits.ts';
import type { NetworkSpec } from '../spec.ts';

export const NETWORK_SOCKETS = { http: 'http.sock', socks: 'socks.sock', callback: 'callback.sock' } as const;

function listen(server: Server, path: string): Promise<void> {
  rmSync(path, { force: true });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      // An error of a listening server (an accept that failed) ends nothing but that accept.
      server.on('error', () => undefined);
      // The sandbox's uid must be able to connect; nobody else can see this directory.
      chmodSync(path, 0o666);
      resolve();
    });
  });
}

/** Starts the sandbox's proxies; resolves once every socket accepts connections. */
export async function startSandboxNetwork(spec: NetworkSpec): Promise<{ close(): void }> {
  mkdirSync(spec.socketDir, { recursive: true, mode: 0o755 });
  chmodSync(spec.socketDir, 0o755);
  const refusals = new RefusalLog(spec.refusalLog);
  const callback = spec.callback ? callbackServer(spec.callback, refusals) : null;
  const outbound = new OutboundConnections();
  const egress = new EgressProxy(
    spec.rules,
    refusals,
    callback && spec.callbackAddress ? { address: spec.callbackAddress, server: callback } : null,
    outbound,
  );
  const servers: [Server, string][] = [
    [egress.httpServer(), NETWORK_SOCKETS.http],
    [egress.socksServer(), NETWORK_SOCKETS.socks],
  ];
  if (callback) servers.push([callback, NETWORK_SOCKETS.callback]);
  // The sandbox's connections, counted over all its proxies (their upstreams go with them), and cut
  // at close: a shared supervisor lives on after the sandbox.
  const open = new Set<Socket>();
  for (const [server] of servers)
    server.on('connection', (socket: Socket) => {
      if (open.has(socket)) return; // a tunnel handed on to the callback routes
      if (open.size >= MAX_SANDBOX_CONNECTIONS) return void socket.destroy();
      open.add(socket);
      socket.once('close', () => open.delete(socket));
    });
  const close = () => {
    for (const [server] of servers) if (server.listening) server.close();
    for (const socket of open) socket.destroy();
    outbound.close();
  };
  try {
    await Promise.all(servers.map(([server, name]) => listen(server, join(spec.socketDir, name))));
  } catch (error) {
    close();
    throw error;
  }
  return { close };
}
