// A load balancer in front of API replicas, as production puts one: TCP, round robin per
// connection, and a replica that refuses the connection (killed, not yet up) is passed over for the
// next. A connection whose replica dies is cut, as a real balancer's would be; the client retries.
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface LoadBalancer {
  url: string;
  /** Connections each backend accepted, by its address. */
  accepted: Map<string, number>;
  close(): Promise<void>;
}

export async function startLoadBalancer(backends: { host: string; port: number }[]): Promise<LoadBalancer> {
  const accepted = new Map<string, number>();
  const open = new Set<Socket>();
  let next = 0;

  const forward = (client: Socket, tries: number) => {
    const backend = backends[next++ % backends.length]!;
    const upstream = connect(backend.port, backend.host);
    open.add(upstream);
    upstream.once('close', () => open.delete(upstream));
    // Before the connection is made, an error is a refusal: the next replica is asked.
    upstream.once('error', () => (tries + 1 < backends.length ? forward(client, tries + 1) : client.destroy()));
    upstream.once('connect', () => {
      const name = `${backend.host}:${backend.port}`;
      accepted.set(name, (accepted.get(name) ?? 0) + 1);
      upstream.removeAllListeners('error');
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
      upstream.once('close', () => client.destroy());
      client.once('close', () => upstream.destroy());
      client.pipe(upstream).pipe(client);
      client.resume();
    });
  };

  const server: Server = createServer({ pauseOnConnect: true }, (client) => {
    open.add(client);
    client.on('error', () => client.destroy());
    client.once('close', () => open.delete(client));
    forward(client, 0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    accepted,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
