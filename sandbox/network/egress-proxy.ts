// The sandbox's only way out: an HTTP proxy (CONNECT tunnels and plain absolute-form requests) and
// a SOCKS5 proxy, each listening on a unix socket that is bound into the sandbox. Every connection
// is decided by the egress policy; a refusal answers the agent plainly and is logged for the run.
import { appendFileSync } from 'node:fs';
import type { ClientRequest, IncomingMessage, Server, ServerResponse } from 'node:http';
import { http } from '../../platform/node-http.ts';
import { createServer as createNetServer, type Socket } from 'node:net';
import type { EgressRule } from '../../core/egress-rules.ts';
import { decideEgress, type EgressDecision } from '../../platform/network-destinations.ts';
import { bounded, MAX_SANDBOX_CONNECTIONS, MAX_SANDBOX_LOOKUPS, OutboundConnections } from './proxy-limits.ts';
import { splice } from '../inside/wire.ts';

const { createServer: createHttpServer, request: httpRequest } = http;

/** One refused connection, as the run's `sandbox.egress_refused` event shows it. */
export interface EgressRefusalRecord {
  ts: string;
  protocol: 'http' | 'connect' | 'socks' | 'callback';
  destination: string;
  reason: string;
  detail?: string;
}

const MAX_LOGGED_REFUSALS = 1000;
const SOCKS_HANDSHAKE_MS = 30_000;
const BUSY_TEXT = `svc sandbox: this sandbox holds ${MAX_SANDBOX_CONNECTIONS} connections out already\n`;
const BUSY = `HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\n\r\n${BUSY_TEXT}`;

/** Appends refusals as JSON lines, capped so a looping agent cannot fill the disk with them. */
export class RefusalLog {
  readonly #path: string;
  #written = 0;

  constructor(path: string) {
    this.#path = path;
  }

  record(refusal: Omit<EgressRefusalRecord, 'ts'>): void {
    if (this.#written > MAX_LOGGED_REFUSALS) return;
    this.#written += 1;
    const line =
      this.#written > MAX_LOGGED_REFUSALS
        ? {
            ts: new Date().toISOString(),
            protocol: refusal.protocol,
            destination: '*',
            reason: 'further_refusals_not_logged',
          }
        : { ts: new Date().toISOString(), ...refusal };
    try {
      appendFileSync(this.#path, `${JSON.stringify(line)}\n`, { mode: 0o600 });
    } catch {
      // A full disk (the agent's doing, perhaps) loses the record, never the supervisor.
    }
  }
}

function splitHostPort(authority: string): { host: string; port: number } | null {
  const match = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(authority);
  if (!match) return null;
  const port = Number(match[2]);
  return port >= 1 && port <= 65535 ? { host: match[1]!, port } : null;
}

/** The sandbox-local address of svc's callback routes, and the server that answers there. */
export interface CallbackRoute {
  address: string;
  server: Server;
}

export class EgressProxy {
  readonly #rules: readonly EgressRule[];
  readonly #refusals: RefusalLog;
  readonly #callback: CallbackRoute | null;
  readonly #outbound: OutboundConnections;
  #lookups = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(
    rules: readonly EgressRule[],
    refusals: RefusalLog,
    callback: CallbackRoute | null = null,
    outbound = new OutboundConnections(),
  ) {
    this.#rules = rules;
    this.#refusals = refusals;
    this.#callback = callback;
    this.#outbound = outbound;
  }

  async #decide(protocol: EgressRefusalRecord['protocol'], host: string, port: number): Promise<EgressDecision> {
    if (this.#lookups >= MAX_SANDBOX_LOOKUPS) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    this.#lookups += 1;
    let decision: EgressDecision;
    try {
      decision = await decideEgress(this.#rules, host, port);
    } finally {
      this.#lookups -= 1;
      this.#waiting.shift()?.();
    }
    if (!decision.allowed)
      this.#refusals.record({
        protocol,
        destination: `${host}:${port}`,
        reason: decision.reason,
        ...(decision.detail ? { detail: decision.detail } : {}),
      });
    return decision;
  }

  /** The HTTP proxy: CONNECT for TLS and any TCP, absolute-form requests for plain HTTP. */
  httpServer(): Server {
    const server = createHttpServer((request, response) =>
      this.#forward(request, response).catch(() => response.destroy()),
    );
    server.on('connect', (request: IncomingMessage, client: Socket, head: Buffer) =>
      this.#tunnel(request, client, head).catch(() => client.destroy()),
    );
    server.on('clientError', (_error, socket) => socket.destroy());
    return bounded(server);
  }

  async #tunnel(request: IncomingMessage, client: Socket, head: Buffer): Promise<void> {
    client.on('error', () => client.destroy());
    const target = splitHostPort(request.url ?? '');
    if (!target) return void client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
    // A client that proxies even loopback (SVC_BASE_URL): the tunnel leads to the callback routes.
    if (this.#callback && `${target.host}:${target.port}` === this.#callback.address) {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) client.unshift(head);
      return void this.#callback.server.emit('connection', client);
    }
    const decision = await this.#decide('connect', target.host, target.port);
    if (!decision.allowed)
      return void client.end(
        'HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\n' +
          `svc sandbox: egress to ${target.host}:${target.port} refused (${decision.reason})\n`,
      );
    const upstream = upstreamOf(this.#outbound, client, decision.address, target.port);
    if (!upstream) return void client.end(BUSY);
    upstream.once('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n'));
    upstream.once('connect', () => {
      upstream.removeAllListeners('error');
      if (client.destroyed) return void upstream.destroy();
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      splice(client, upstream);
    });
  }

  async #forward(request: IncomingMessage, response: ServerResponse): Promise<void> {
    // Whatever opens for this request is cut once its client is gone, even while it is decided.
    let upstream: ClientRequest | null = null;
    response.once('close', () => response.writableFinished || upstream?.destroy());
    let url: URL;
    try {
      url = new URL(request.url ?? '');
    } catch {
      return void response
        .writeHead(400, { 'content-type': 'text/plain' })
        .end('svc sandbox: send absolute-form requests (http://host/path), or CONNECT\n');
    }
    if (url.protocol !== 'http:')
      return void response.writeHead(400, { 'content-type': 'text/plain' }).end('svc sandbox: use CONNECT for https\n');
    const port = Number(url.port || 80);
    if (this.#callback && `${url.hostname}:${port}` === this.#callback.address) {
      request.url = `${url.pathname}${url.search}`;
      return void this.#callback.server.emit('request', request, response);
    }
    const decision = await this.#decide('http', url.hostname, port);
    if (response.destroyed) return;
    if (!decision.allowed)
      return void response
        .writeHead(403, { 'content-type': 'text/plain' })
        .end(`svc sandbox: egress to ${url.hostname}:${port} refused (${decision.reason})\n`);
    const socket = this.#outbound.connect(decision.address, port);
    if (!socket) return void response.writeHead(503, { 'content-type': 'text/plain' }).end(BUSY_TEXT);
    const headers: Record<string, string | string[] | undefined> = { ...request.headers, host: url.host };
    for (const hop of ['proxy-authorization', 'proxy-connection', 'connection', 'keep-alive']) delete headers[hop];
    upstream = httpRequest(
      {
        method: request.method,
        path: `${url.pathname}${url.search}`,
        headers,
        setHost: false,
        // A connection of its own, counted in the sandbox's, closed after: no pool between sandboxes.
        createConnection: () => socket,
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.once('error', () => (response.headersSent ? response.destroy() : response.writeHead(502).end()));
    request.pipe(upstream);
  }

  /** The SOCKS5 proxy (no authentication, CONNECT only), for TCP clients that do not speak HTTP. */
  socksServer() {
    return bounded(
      createNetServer((client) => {
        client.on('error', () => client.destroy());
        // A client that never finishes its handshake does not hold a place for ever.
        client.setTimeout(SOCKS_HANDSHAKE_MS, () => client.destroy());
        void this.#socks(client);
      }),
    );
  }

  async #socks(client: Socket): Promise<void> {
    const read = bufferedReader(client);
    const reply = (code: number) => client.write(Buffer.from([5, code, 0, 1, 0, 0, 0, 0, 0, 0]));
    try {
      const [version, methodCount] = await read(2);
      if (version !== 5) return void client.destroy();
      const methods = await read(methodCount!);
      if (!methods.includes(0)) return void client.end(Buffer.from([5, 0xff]));
      client.write(Buffer.from([5, 0]));
      const [, command, , addressType] = await read(4);
      let host: string;
      if (addressType === 1) host = [...(await read(4))].join('.');
      else if (addressType === 3) host = (await read((await read(1))[0]!)).toString('latin1');
      else if (addressType === 4) host = ((await read(16)).toString('hex').match(/.{4}/g) ?? []).join(':');
      else return void (reply(8), client.end());
      const portBytes = await read(2);
      const port = portBytes.readUInt16BE(0);
      if (command !== 1) return void (reply(7), client.end());
      const decision = await this.#decide('socks', host, port);
      if (!decision.allowed) return void (reply(2), client.end());
      const upstream = upstreamOf(this.#outbound, client, decision.address, port);
      if (!upstream) return void (reply(1), client.end());
      upstream.once('error', () => (reply(5), client.end()));
      upstream.once('connect', () => {
        upstream.removeAllListeners('error');
        if (client.destroyed) return void upstream.destroy();
        reply(0);
        client.setTimeout(0);
        splice(client, upstream);
      });
    } catch {
      client.destroy();
    }
  }
}

/** A connection out for `client`, cut when the client goes (even before it connects); null when none may open. */
function upstreamOf(outbound: OutboundConnections, client: Socket, host: string, port: number): Socket | null {
  if (client.destroyed) return null;
  const upstream = outbound.connect(host, port);
  client.once('close', () => upstream?.destroy());
  return upstream;
}

/** Reads exact byte counts from a socket during a handshake; leftover bytes are unshifted back. */
function bufferedReader(socket: Socket): (count: number) => Promise<Buffer> {
  let pending = Buffer.alloc(0);
  return (count) =>
    new Promise((resolve, reject) => {
      const attempt = () => {
        if (pending.length >= count) {
          socket.off('data', onData);
          socket.off('close', onClose);
          const chunk = pending.subarray(0, count);
          const rest = pending.subarray(count);
          pending = Buffer.alloc(0);
          if (rest.length) socket.unshift(rest);
          socket.pause();
          return resolve(chunk);
        }
      };
      const onData = (data: Buffer) => {
        pending = Buffer.concat([pending, data]);
        attempt();
      };
      const onClose = () => reject(new Error('closed during the handshake'));
      socket.on('data', onData);
      socket.once('close', onClose);
      socket.resume();
      attempt();
    });
}
