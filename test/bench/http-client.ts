// The benches' HTTP client for latency figures: node:http with one keep-alive pool, the leanest a
// caller can have. The tests' helper uses fetch (undici), which spends ~0.5 ms more of the bench
// process's CPU per request than this: the caller's cost, not svc's (docs/performance.md).
import { Agent, request } from 'node:http';

export interface LeanResponse {
  status: number;
  body: any;
}

/** Requests to one svc API as its operator: JSON in, JSON out. */
export function leanClient(baseUrl: string, token: string) {
  const url = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  return {
    request(method: string, path: string, body?: unknown): Promise<LeanResponse> {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const headers: Record<string, string | number> = { authorization: `Bearer ${token}` };
      if (payload !== undefined)
        Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
      return new Promise((resolve, reject) => {
        const sent = request({ host: url.hostname, port: url.port, path, method, agent, headers }, (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            const text = Buffer.concat(chunks).toString();
            resolve({ status: response.statusCode ?? 0, body: text ? JSON.parse(text) : undefined });
          });
          response.on('error', reject);
        });
        sent.on('error', reject);
        sent.end(payload);
      });
    },
    close: () => agent.destroy(),
  };
}
