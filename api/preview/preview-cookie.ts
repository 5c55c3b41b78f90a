// The cookie that lets a browser into one run's preview: `<runId>.<expiry ms>.<HMAC>`, keyed off
// the operator token (rotating it signs every browser out), HttpOnly, SameSite=Lax, scoped to the
// run's path (path mode) or to its host (subdomain mode). Never a token in a query string.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** How long a preview login lasts. */
export const PREVIEW_LOGIN_MS = 12 * 60 * 60_000;

export class PreviewCookies {
  readonly #key: Buffer;

  constructor(operatorToken: string) {
    this.#key = createHmac('sha256', operatorToken).update('svc-preview-cookie-v1').digest();
  }

  #mac(runId: string, expiresAt: number): string {
    return createHmac('sha256', this.#key).update(`${runId}.${expiresAt}`).digest('base64url');
  }

  sign(runId: string, now = Date.now()): string {
    const expiresAt = now + PREVIEW_LOGIN_MS;
    return `${runId}.${expiresAt}.${this.#mac(runId, expiresAt)}`;
  }

  /** Whether the value lets its bearer into this run's preview now. */
  admits(value: string | undefined, runId: string, now = Date.now()): boolean {
    const [id, expiry, mac, extra] = (value ?? '').split('.');
    if (extra !== undefined || id !== runId || !expiry || !mac || !/^\d{1,15}$/.test(expiry)) return false;
    if (Number(expiry) < now) return false;
    const expected = Buffer.from(this.#mac(runId, Number(expiry)));
    const given = Buffer.from(mac);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}

/** The cookies of a Cookie header, in order, name and value (a name may come more than once). */
export function parseCookies(header: string | undefined): [string, string][] {
  const cookies: [string, string][] = [];
  for (const part of (header ?? '').split(';')) {
    const index = part.indexOf('=');
    if (index <= 0) continue;
    cookies.push([part.slice(0, index).trim(), part.slice(index + 1).trim()]);
  }
  return cookies;
}
