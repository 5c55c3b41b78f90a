// A standalone worker's own /metrics: the svc_* histograms it observes (queue wait, sandbox ready,
// first output, run duration, finalize, time to PR…) and, when the SDK exports them, the Temporal
// SDK's metrics, in one scrape. Operators only (the operator token, as on the API's /metrics).
// In `svc serve` the API's /metrics already serves all of this.
import { timingSafeEqual } from 'node:crypto';
import type { Server } from 'node:http';
import { http } from '../platform/node-http.ts';
import { metricsRegistry } from '../platform/metrics.ts';

export interface WorkerMetricsServer {
  url: string;
  close(): Promise<void>;
}

function authorized(header: string | undefined, token: string): boolean {
  const presented = Buffer.from(/^bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1] ?? '');
  const expected = Buffer.from(token);
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

/** Serves GET /metrics on `address` (host:port), behind the operator token. */
export async function startWorkerMetricsServer(options: {
  address: string;
  operatorToken: string;
  temporalMetrics?: () => Promise<string>;
}): Promise<WorkerMetricsServer> {
  const separator = options.address.lastIndexOf(':');
  const host = options.address.slice(0, separator).replace(/^\[|\]$/g, '') || '127.0.0.1';
  const port = Number(options.address.slice(separator + 1));
  if (separator < 0 || !Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`SVC_WORKER_METRICS_ADDRESS must be host:port, not "${options.address}"`);
  const server: Server = http.createServer((request, response) => {
    const reply = (status: number, body: string, type = 'text/plain; charset=utf-8') => {
      response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      response.end(body);
    };
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') return reply(404, 'not found\n');
    if (!authorized(request.headers.authorization, options.operatorToken)) {
      response.setHeader('www-authenticate', 'Bearer realm="svc"');
      return reply(401, 'send Authorization: Bearer <operator token>\n');
    }
    void (async () => {
      const own = await metricsRegistry.metrics();
      const sdk = (await options.temporalMetrics?.().catch(() => '')) ?? '';
      reply(200, `${own}\n${sdk}`, metricsRegistry.contentType);
    })().catch(() => reply(500, 'metrics failed\n'));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = server.address();
  const boundPort = typeof bound === 'object' && bound ? bound.port : port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${boundPort}/metrics`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
