// svc's preview proxy, on its own port (SVC_PREVIEW_PORT): a browser with a run's preview cookie
// reaches that run's live preview, HTTP and WebSocket (dev servers' hot reload), through the port
// its worker serves it on (or its pod's Service). Path mode: /p/<runId>/… (the prefix is cut
// before the preview sees the request); subdomain mode: run-<id>.<host>. Nothing else gets
// through: no cookie, another run's cookie, a preview that is not live. svc's cookies never reach
// the preview, and the preview's cookies stay in its own scope (decision 0044).
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { http } from '../../platform/node-http.ts';
import { connect, type Socket } from 'node:net';
import { isId } from '../../core/id-shape.ts';
import { previewCookieName } from '../../core/preview.ts';
import type { RunsRepository } from '../../db/repositories/runs.repository.ts';
import type { PreviewSettings } from '../../platform/preview-settings.ts';
import { parseCookies, type PreviewCookies } from './preview-cookie.ts';
import { answerHeaders, readAnswerHead } from './preview-answer-headers.ts';

export interface PreviewProxyDeps {
  settings: PreviewSettings;
  cookies: PreviewCookies;
  /** Where the run's live preview is (its worker's address, or its pod's Service), or null. */
  liveUpstream: (runId: string) => Promise<Upstream | null>;
  /** Someone used the run's preview (called at most every HIT_DEBOUNCE_MS per run). */
  hit: (runId: string, at: string) => void;
}

/** How often a run's workflow hears that its preview is in use (its idle clock). */
export const HIT_DEBOUNCE_MS = 30_000;
/** Request headers the preview does not see: svc's own credentials. */
const WITHHELD = ['authorization', 'proxy-authorization'];

/** A live preview's address. */
export interface Upstream {
  host: string;
  port: number;
}

type Target = { runId: string; path: string } | { redirect: string } | null;

function refuse(response: ServerResponse, status: number, code: string, message: string, hint?: string): void {
  response
    .writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' })
    .end(JSON.stringify({ error: { code, message, ...(hint ? { hint } : {}) } }));
}

export function createPreviewProxy(deps: PreviewProxyDeps): Server {
  const { settings } = deps;
  const lastHits = new Map<string, number>();

  /** Where a run's preview lives on the proxy's host: its path prefix in path mode, null on a host of its own. */
  const prefixOf = (runId: string) => (settings.mode === 'path' ? `/p/${runId}` : null);

  /** Which run a request is for, and the path the preview sees. */
  function targetOf(request: IncomingMessage): Target {
    const url = request.url ?? '/';
    if (settings.mode === 'subdomain') {
      const host = (request.headers.host ?? '').toLowerCase().replace(/:\d+$/, '');
      const label = host.endsWith(`.${settings.host}`) ? host.slice(0, -settings.host!.length - 1) : '';
      const runId = label.startsWith('run-') ? label.slice(4) : '';
      return isId('run', runId) ? { runId, path: url } : null;
    }
    const match = /^\/p\/([^/?#]+)(\/[^?#]*)?(\?.*)?$/.exec(url);
    if (!match || !isId('run', match[1]!)) return null;
    if (match[2] === undefined) return { redirect: `/p/${match[1]}/${match[3] ?? ''}` };
    return { runId: match[1]!, path: `${match[2]}${match[3] ?? ''}` };
  }

  /** The preview's headers: svc's cookies and credentials taken out, the original host and prefix told. */
  function forwardedHeaders(request: IncomingMessage, runId: string): Record<string, string | string[]> {
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(request.headers))
      if (value !== undefined && !WITHHELD.includes(name) && name !== 'cookie') headers[name] = value;
    const kept = parseCookies(request.headers.cookie).filter(([name]) => !name.startsWith('svc_preview'));
    if (kept.length) headers.cookie = kept.map(([name, value]) => `${name}=${value}`).join('; ');
    headers['x-forwarded-host'] = request.headers.host ?? '';
    headers['x-forwarded-proto'] = 'http';
    if (settings.mode === 'path') headers['x-forwarded-prefix'] = `/p/${runId}`;
    return headers;
  }

  /** Admits the request (cookie, live preview) and answers the preview's port, or refuses it. */
  async function admit(request: IncomingMessage, deny: (status: number, code: string, message: string) => void) {
    const target = targetOf(request);
    if (!target) return void deny(404, 'not_found', 'no preview here');
    if ('redirect' in target) return target;
    // Any of the name's values (a page of the same origin can add a decoy of that name in front).
    const name = previewCookieName(settings.mode, target.runId);
    const values = parseCookies(request.headers.cookie).filter(([cookie]) => cookie === name);
    if (!values.some(([, value]) => deps.cookies.admits(value, target.runId)))
      return void deny(401, 'unauthorized', `log in to run ${target.runId}'s preview first`);
    const upstream = await deps.liveUpstream(target.runId).catch(() => null);
    if (upstream === null) return void deny(404, 'not_found', `run ${target.runId} has no live preview`);
    const now = Date.now();
    if (now - (lastHits.get(target.runId) ?? 0) >= HIT_DEBOUNCE_MS) {
      if (lastHits.size > 10_000) lastHits.clear();
      lastHits.set(target.runId, now);
      deps.hit(target.runId, new Date(now).toISOString());
    }
    return { ...target, upstream };
  }

  const server = http.createServer(async (request: IncomingMessage, response: ServerResponse) => {
    const admitted = await admit(request, (status, code, message) =>
      refuse(response, status, code, message, status === 401 ? 'POST /runs/{id}/preview/login sets it' : undefined),
    );
    if (!admitted) return;
    if ('redirect' in admitted) return void response.writeHead(308, { location: admitted.redirect }).end();
    const upstream = http.request(
      {
        host: admitted.upstream.host,
        port: admitted.upstream.port,
        method: request.method,
        path: admitted.path,
        headers: forwardedHeaders(request, admitted.runId),
      },
      (answer) => {
        const status = answer.statusCode ?? 0;
        // A preview's answer the HTTP layer would refuse to repeat (status 0, 099) is a bad gateway, not a crash.
        if (status < 200 || status > 599) {
          answer.destroy();
          return refuse(response, 502, 'preview_unreachable', `the preview answered status ${status}`);
        }
        try {
          response.writeHead(status, answerHeaders(answer.headers, prefixOf(admitted.runId)));
        } catch (error) {
          answer.destroy();
          return refuse(response, 502, 'preview_unreachable', `the preview's answer: ${(error as Error).message}`);
        }
        answer.pipe(response);
      },
    );
    // A browser that goes away takes its request to the preview with it (streams would pile up).
    response.once('close', () => upstream.destroy());
    upstream.once('error', (error) =>
      response.headersSent
        ? response.destroy()
        : refuse(response, 502, 'preview_unreachable', `the preview did not answer: ${error.message}`),
    );
    request.pipe(upstream);
  });

  // WebSockets: the same admission, then the upgrade request goes to the preview as it came, byte for byte after.
  server.on('upgrade', async (request: IncomingMessage, client: Socket, head: Buffer) => {
    client.on('error', () => client.destroy());
    const deny = (status: number, _code: string, message: string) =>
      client.end(
        `HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : 'Not Found'}\r\nconnection: close\r\n\r\n${message}`,
      );
    const admitted = await admit(request, deny);
    if (!admitted || 'redirect' in admitted) return void (admitted && deny(404, 'not_found', 'no preview here'));
    if (client.destroyed) return;
    const upstream = connect(admitted.upstream.port, admitted.upstream.host);
    upstream.once('error', () => client.destroy());
    upstream.once('connect', () => {
      const headers = forwardedHeaders(request, admitted.runId);
      const lines = Object.entries(headers).flatMap(([name, value]) =>
        [value].flat().map((item) => `${name}: ${String(item).replace(/[\r\n]/g, '')}`),
      );
      upstream.write(`${request.method} ${admitted.path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`);
      if (head.length) upstream.write(head);
      client.pipe(upstream);
      // The answer's head is the preview's too: its cookies scoped, Clear-Site-Data dropped, as for HTTP.
      readAnswerHead(upstream, prefixOf(admitted.runId), (answerHead, rest) => {
        client.write(answerHead);
        if (rest.length) client.write(rest);
        upstream.pipe(client);
      });
    });
    for (const socket of [client, upstream]) socket.once('close', () => (client.destroy(), upstream.destroy()));
  });
  server.on('clientError', (_error, socket) => socket.destroy());
  return server;
}

export interface RunningPreviewProxy {
  port: number;
  close(): Promise<void>;
}

/** Listens; where a run's live preview is, is read from the read model (cached a second: the proxy's hot path). */
export async function startPreviewProxy(
  deps: Omit<PreviewProxyDeps, 'liveUpstream'> & { host: string; runs: Pick<RunsRepository, 'find'> },
): Promise<RunningPreviewProxy> {
  const cache = new Map<string, { upstream: Upstream | null; until: number }>();
  const liveUpstream = async (runId: string) => {
    const cached = cache.get(runId);
    if (cached && cached.until > Date.now()) return cached.upstream;
    const row = await deps.runs.find(runId);
    const { firstPort, lastPort, workerHost } = deps.settings;
    const port = row?.previewState === 'live' ? (row.previewPort ?? null) : null;
    // A preview started before hosts were recorded is on the one worker host there was, on a port
    // of its range (never a port a project named).
    const host = row?.previewHost ?? (port !== null && port >= firstPort && port <= lastPort ? workerHost : null);
    const upstream = port !== null && host !== null ? { host, port } : null;
    if (cache.size > 10_000) cache.clear();
    cache.set(runId, { upstream, until: Date.now() + 1000 });
    return upstream;
  };
  const server = createPreviewProxy({ ...deps, liveUpstream });
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, deps.host, () => resolve());
    });
  // The port next to the API's is a default, not a promise: when it is taken, any free one (svc serve prints it).
  await listen(deps.settings.proxyPort).catch((error: NodeJS.ErrnoException) => {
    if (deps.settings.proxyPortExplicit || error.code !== 'EADDRINUSE') throw error;
    return listen(0);
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : deps.settings.proxyPort,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
