// A GET as a browser's address bar sends it, redirects not followed. Node's fetch cannot: it always
// says `Sec-Fetch-Mode: cors`, which is what a script's request says, so this goes through node:http.
import { http } from '../../platform/node-http.ts';

export const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

export interface Navigation {
  status: number;
  location: string | null;
  contentType: string | null;
  text: string;
}

export function navigate(baseUrl: string, path: string, headers: Record<string, string> = {}): Promise<Navigation> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const request = http.get(
      {
        host: url.hostname,
        port: url.port,
        path,
        headers: { accept: BROWSER_ACCEPT, 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document', ...headers },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('error', reject);
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            location: response.headers.location ?? null,
            contentType: response.headers['content-type']?.split(';')[0] ?? null,
            text,
          }),
        );
      },
    );
    request.on('error', reject);
  });
}
