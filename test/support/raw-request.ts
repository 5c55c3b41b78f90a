// A raw HTTP request, as a browser (or a hostile page through one) would shape it: any Host, Origin,
// Cookie and Content-Type, or none; fetch would set or refuse some of them itself.
import { request as httpRequest } from 'node:http';

export interface RawResponse {
  status: number;
  /** The body as JSON when it is JSON, else its text. */
  body: any;
  headers: Record<string, string | string[] | undefined>;
}

export function rawRequest(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<RawResponse> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: `${url.pathname}${url.search}`,
        headers: { ...headers, ...(body ? { 'content-length': String(Buffer.byteLength(body)) } : {}) },
      },
      (response) => {
        let text = '';
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            // Not JSON: a page, kept as text.
          }
          resolve({ status: response.statusCode ?? 0, body: parsed, headers: response.headers });
        });
      },
    );
    request.once('error', reject);
    request.end(body);
  });
}
