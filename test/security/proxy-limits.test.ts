// Attack: make a sandbox's proxies hold more than their share of the process that serves them (the
// worker's shared supervisor serves every sandbox's). A sandbox holds at most 256 connections over
// all its proxies together, a connection out dies with the sandbox's connection even when that went
// first, and closing the sandbox's network cuts whatever it still holds.
import test from 'ava';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEgressList } from '../../core/egress-rules.ts';
import { MAX_SANDBOX_CONNECTIONS } from '../../sandbox/network/proxy-limits.ts';
import { NETWORK_SOCKETS, startSandboxNetwork } from '../../sandbox/network/sandbox-network.ts';
import { waitFor } from '../support/processes.ts';

/** A TCP service on loopback that answers nothing and counts the connections it holds open. */
async function countingService(): Promise<{ server: Server; port: number; open: () => number }> {
  const held = new Set<Socket>();
  const server = createServer((socket) => {
    held.add(socket);
    socket.on('error', () => undefined);
    // Read (and drop) what comes, so that an end from the proxy is seen.
    socket.resume();
    socket.once('close', () => held.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as { port: number }).port, open: () => held.size };
}

async function network(port: number) {
  const socketDir = join(mkdtempSync(join(tmpdir(), 'svc-net-')), 'net');
  const started = await startSandboxNetwork({
    socketDir,
    rules: parseEgressList(`127.0.0.1:${port}`, 'operator'),
    callback: null,
    refusalLog: join(socketDir, '..', 'refusals.jsonl'),
  });
  return { ...started, path: (name: keyof typeof NETWORK_SOCKETS) => join(socketDir, NETWORK_SOCKETS[name]) };
}

test('a sandbox holds at most its share of connections over all its proxies, and loses them at close', async (t) => {
  const service = await countingService();
  t.teardown(() => service.server.close());
  const net = await network(service.port);
  const clients: Socket[] = [];
  let closed = 0;
  for (let i = 0; i < 300; i++) {
    const client = connect(net.path(i % 2 ? 'socks' : 'http'));
    client.on('error', () => undefined);
    client.once('close', () => (closed += 1));
    clients.push(client);
  }
  await waitFor(async () => closed >= 300 - MAX_SANDBOX_CONNECTIONS, 'the connections past the limit cut');
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.is(closed, 300 - MAX_SANDBOX_CONNECTIONS, 'the rest are held');
  net.close();
  await waitFor(async () => closed === 300, 'every connection cut at close');
  t.pass();
});

test('a connection out that opens after its sandbox hung up is cut at once', async (t) => {
  const service = await countingService();
  t.teardown(() => service.server.close());
  const net = await network(service.port);
  t.teardown(() => net.close());
  for (let i = 0; i < 20; i++) {
    const client = connect(net.path('http'));
    client.on('error', () => undefined);
    // The request, and gone before the proxy has decided and connected.
    client.write(`CONNECT 127.0.0.1:${service.port} HTTP/1.1\r\n\r\n`, () => client.destroy());
  }
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.is(service.open(), 0, `${service.open()} connections out outlived their sandbox's`);
});

test('pipelined requests open no more connections out than the sandbox may hold', async (t) => {
  const service = await countingService();
  t.teardown(() => service.server.close());
  const net = await network(service.port);
  t.teardown(() => net.close());
  const client = connect(net.path('http'));
  client.on('error', () => undefined);
  client.on('data', () => undefined);
  // One connection of the sandbox's, 300 requests at once, none of them ever answered.
  const request = `GET http://127.0.0.1:${service.port}/ HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`;
  client.write(request.repeat(300));
  await new Promise((resolve) => setTimeout(resolve, 1500));
  t.true(service.open() > 0, 'the requests went out');
  t.true(service.open() <= MAX_SANDBOX_CONNECTIONS, `${service.open()} connections out for one sandbox`);
  net.close();
  await waitFor(async () => service.open() === 0, 'every connection out cut with the network');
});
