// The sandbox's way to svc: a reverse proxy on a unix socket bound into the sandbox, passing only
// the run's own callback routes (inbox, finalize intent and result, git credential) to
// the API, with the run's token added here. The sandbox holds no svc credential, and even an
// API started with --no-auth (every caller the operator) shows it nothing but its own run.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { http, https } from '../../platform/node-http.ts';
import type { RefusalLog } from './egress-proxy.ts';
import { MAX_SANDBOX_CONNECTIONS } from './proxy-limits.ts';
import type { CallbackTarget } from '../spec.ts';

/** What a local sandbox may call. Not salvage: svc salvages a local run itself (and its 96 MiB
 * bodies would be the agent's way to load the API). */
export const CALLBACK_ROUTES = ['inbox', 'finalize-intent', 'finalize-result', 'git-credential'] as const;

/** Connections one sandbox's callbacks hold to the API at once. */
const CALLBACK_CONNECTIONS = 8;

/** The request headers that reach the API; everything else (cookies, origins, credentials) stays behind. */
const FORWARDED_HEADERS = ['accept', 'content-type', 'content-length', 'x-request-id'];

function refuse(response: ServerResponse, message: string): void {
  response.writeHead(403, { 'content-type': 'application/json' }).end(
    JSON.stringify({
      error: { code: 'forbidden', message, hint: 'a sandbox reaches only its own run callback routes' },
    }),
  );
}

export function callbackServer(target: CallbackTarget, refusals: RefusalLog) {
  const allowed = new RegExp(`^/runs/${target.runId}/(${CALLBACK_ROUTES.join('|')})(\\?[^#]*)?$`);
  const base = new URL(target.baseUrl);
  const secure = base.protocol === 'https:';
  const send = secure ? https().request : http.request;
  // The sandbox's own few connections to the API (its callbacks come one or two at a time): a
  // sandbox that pipelines thousands of requests waits for them, it does not open thousands.
  const agent = new (secure ? https().Agent : http.Agent)({ keepAlive: true, maxSockets: CALLBACK_CONNECTIONS });
  const server = http.createServer((request: IncomingMessage, response: ServerResponse) => {
    const path = request.url ?? '';
    if (!allowed.test(path) || !['GET', 'POST'].includes(request.method ?? '')) {
      refusals.record({
        protocol: 'callback',
        destination: `${request.method} ${path.slice(0, 200)}`,
        reason: 'not_a_callback_route',
      });
      return refuse(
        response,
        `svc sandbox: ${request.method} ${path.slice(0, 200)} is not one of this run's callback routes`,
      );
    }
    const headers: Record<string, string> = { authorization: `Bearer ${target.token}`, host: base.host };
    for (const name of FORWARDED_HEADERS) {
      const value = request.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const upstream = send(
      new URL(`${base.pathname.replace(/\/+$/, '')}${path}`, base),
      { method: request.method, headers, agent },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, {
          'content-type': answer.headers['content-type'] ?? 'application/json',
        });
        answer.pipe(response);
      },
    );
    upstream.once('error', (error) =>
      response.headersSent
        ? response.destroy()
        : response
            .writeHead(502, { 'content-type': 'application/json' })
            .end(JSON.stringify({ error: { code: 'svc_unreachable', message: error.message } })),
    );
    // A sandbox that hangs up mid-answer does not leave the call to the API open.
    response.once('close', () => response.writableFinished || upstream.destroy());
    request.pipe(upstream);
  });
  server.on('clientError', (_error, socket) => socket.destroy());
  server.once('close', () => agent.destroy());
  server.maxConnections = MAX_SANDBOX_CONNECTIONS;
  return server;
}
