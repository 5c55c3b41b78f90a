// The judge's verdict export, proxied for operators: the server's own export token goes upstream
// (never the caller's), the query passes through, the body streams back, redirects are refused
// (a redirect could carry the export token elsewhere), and any upstream trouble is a 502.
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { Errors } from '../errors.ts';

export interface JudgeSettings {
  baseUrl: string | undefined;
  exportToken: string | undefined;
  /** How long the judge may stay silent (before answering, or between chunks) before svc gives up. */
  timeoutMs?: number;
}

export interface VerdictsPage {
  body: Readable;
  headers: Record<string, string>;
}

export class JudgeProxy {
  readonly #settings: JudgeSettings;

  constructor(settings: JudgeSettings) {
    this.#settings = settings;
  }

  async verdicts(query: Record<string, string | number | undefined>, signal: AbortSignal): Promise<VerdictsPage> {
    const { baseUrl, exportToken } = this.#settings;
    if (!baseUrl || !exportToken) {
      throw Errors.judgeNotConfigured();
    }
    const search = new URLSearchParams(
      Object.entries(query).flatMap(([key, value]): [string, string][] =>
        value === undefined ? [] : [[key, String(value)]],
      ),
    ).toString();
    const url = `${baseUrl.replace(/\/+$/, '')}/verdicts.jsonl${search ? `?${search}` : ''}`;
    // Silence, not length, ends a request: a slow export that keeps sending is streamed to its end.
    const idleMs = this.#settings.timeoutMs ?? 30_000;
    const silence = new AbortController();
    let idle = setTimeout(() => silence.abort(new Error(`no data for ${idleMs} ms`)), idleMs);
    const stillTalking = () => {
      clearTimeout(idle);
      idle = setTimeout(() => silence.abort(new Error(`no data for ${idleMs} ms`)), idleMs);
    };
    let upstream: Response;
    try {
      upstream = await fetch(url, {
        headers: { authorization: `Bearer ${exportToken}`, accept: 'application/x-ndjson' },
        redirect: 'manual',
        signal: AbortSignal.any([signal, silence.signal]),
      });
    } catch (error) {
      clearTimeout(idle);
      throw Errors.judgeUnreachable((error as Error).message);
    }
    if (upstream.status !== 200 || !upstream.body) {
      clearTimeout(idle);
      await upstream.body?.cancel().catch(() => undefined);
      const why =
        upstream.status >= 300 && upstream.status < 400
          ? 'redirected (redirects are not followed)'
          : `answered ${upstream.status}`;
      throw Errors.judgeExportFailed(why);
    }
    const headers: Record<string, string> = { 'Content-Type': 'application/x-ndjson', 'Cache-Control': 'no-store' };
    const maxId = upstream.headers.get('x-verdicts-max-id');
    if (maxId !== null) headers['X-Verdicts-Max-Id'] = maxId;
    const body = Readable.fromWeb(upstream.body as unknown as WebReadableStream);
    stillTalking();
    body.on('data', stillTalking);
    body.once('close', () => clearTimeout(idle));
    return { body, headers };
  }
}
