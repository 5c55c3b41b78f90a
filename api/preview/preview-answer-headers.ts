// What of a preview's answer reaches the browser. A preview is the agent's code and shares the
// dashboard's host (path mode) or its parent domain (subdomain mode): cookies are per host, not per
// port, so what it sets or clears would otherwise reach svc's own pages (decision 0044).
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/** Response headers a preview never passes on: `Service-Worker-Allowed` would let a preview's worker govern the
 * whole origin, and `Clear-Site-Data` would wipe the dashboard's storage and cookies (they are per host). */
const DROPPED = new Set(['set-cookie', 'service-worker-allowed', 'clear-site-data']);

/**
 * A preview's cookie as the browser gets it: host-only (no Domain, which would reach the dashboard's
 * parent domain) and, in path mode, where the preview shares the dashboard's host, under the
 * preview's own prefix (`Path=/` becomes `Path=/p/<runId>`), so it never rides along with the
 * dashboard's requests nor another preview's. Null for one svc does not pass on: svc's own name, or
 * none.
 */
export function scopedCookie(line: string, prefix: string | null): string | null {
  const [pair, ...attributes] = line.split(';');
  const name = pair!.split('=')[0]!.trim();
  if (!pair!.includes('=') || name === '' || name.toLowerCase().startsWith('svc_preview')) return null;
  const kept: string[] = [];
  let path = '/';
  for (const attribute of attributes) {
    const key = attribute.split('=')[0]!.trim().toLowerCase();
    if (key === 'path') path = attribute.slice(attribute.indexOf('=') + 1).trim();
    else if (key !== 'domain' && key !== '') kept.push(attribute.trim());
  }
  if (!path.startsWith('/')) path = '/';
  const scoped = prefix === null ? path : `${prefix}${path === '/' ? '' : path}`;
  return [pair!.trim(), ...kept, `Path=${scoped}`].join('; ');
}

/** The preview's response headers as the browser gets them (`prefix`: path mode's `/p/<runId>`). */
export function answerHeaders(
  headers: IncomingMessage['headers'],
  prefix: string | null,
): Record<string, string | string[]> {
  const kept: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined && !DROPPED.has(name)) kept[name] = value;
  const cookies = (headers['set-cookie'] ?? []).flatMap((line) => scopedCookie(line, prefix) ?? []);
  if (cookies.length) kept['set-cookie'] = cookies;
  return kept;
}

/** The most of an upgrade's answer head read before the connection is ended: as much as the API reads of a request. */
const MAX_HEAD_BYTES = 64 * 1024;

/** An upgrade's answer head (status line and headers) with the same headers dropped and cookies scoped. */
export function upgradeAnswerHead(head: string, prefix: string | null): string {
  const [status, ...lines] = head.split('\r\n');
  const kept = lines.flatMap((line) => {
    const name = line
      .slice(0, Math.max(0, line.indexOf(':')))
      .trim()
      .toLowerCase();
    if (name === 'set-cookie') {
      const cookie = scopedCookie(line.slice(line.indexOf(':') + 1).trim(), prefix);
      return cookie === null ? [] : [`set-cookie: ${cookie}`];
    }
    return DROPPED.has(name) ? [] : [line];
  });
  return [status, ...kept].join('\r\n');
}

/**
 * Reads the preview's answer to an upgrade up to the end of its head, then hands over the head as
 * the browser may see it and the bytes after it; a head past MAX_HEAD_BYTES ends both sockets.
 */
export function readAnswerHead(
  upstream: Socket,
  prefix: string | null,
  done: (head: string, rest: Buffer) => void,
): void {
  let received = Buffer.alloc(0);
  const onData = (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
    const end = received.indexOf('\r\n\r\n');
    if (end === -1) {
      if (received.length > MAX_HEAD_BYTES) upstream.destroy();
      return;
    }
    upstream.off('data', onData);
    upstream.pause();
    done(
      `${upgradeAnswerHead(received.subarray(0, end).toString('latin1'), prefix)}\r\n\r\n`,
      received.subarray(end + 4),
    );
  };
  upstream.on('data', onData);
}
