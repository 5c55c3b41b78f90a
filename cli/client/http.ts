// The CLI's HTTP client: JSON in, JSON out, and failures typed so commands map them to exit codes.
import type { ClientSettings } from './settings.ts';

export class ServerUnreachableError extends Error {}

export class ServerError extends Error {
  readonly status: number;
  readonly code: string;
  readonly hint: string | undefined;
  constructor(status: number, code: string, message: string, hint: string | undefined) {
    super(message);
    this.status = status;
    this.code = code;
    this.hint = hint;
  }
}

export class SvcClient {
  readonly settings: ClientSettings;

  constructor(settings: ClientSettings) {
    this.settings = settings;
  }

  /** GET an NDJSON stream and yield its lines as parsed objects. */
  async *lines(path: string, signal?: AbortSignal): AsyncGenerator<any> {
    const headers: Record<string, string> = { accept: 'application/x-ndjson' };
    if (this.settings.token) headers.authorization = `Bearer ${this.settings.token}`;
    let response: Response;
    try {
      response = await fetch(`${this.settings.baseUrl}${path}`, { headers, signal });
    } catch (error) {
      throw new ServerUnreachableError(`cannot reach ${this.settings.baseUrl}: ${reason(error)}`);
    }
    if (!response.ok || !response.body) {
      const envelope = (
        (await response.json().catch(() => undefined)) as
          { error?: { code?: string; message?: string; hint?: string } } | undefined
      )?.error;
      throw new ServerError(
        response.status,
        envelope?.code ?? `http_${response.status}`,
        envelope?.message ?? response.statusText,
        envelope?.hint,
      );
    }
    const decoder = new TextDecoder();
    let buffered = '';
    const reader = response.body[Symbol.asyncIterator]();
    for (;;) {
      let next: IteratorResult<Uint8Array>;
      try {
        next = await reader.next();
      } catch (error) {
        if (signal?.aborted) throw error;
        throw new ServerUnreachableError(`lost the connection to ${this.settings.baseUrl}: ${reason(error)}`);
      }
      if (next.done) return;
      buffered += decoder.decode(next.value, { stream: true });
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line) yield JSON.parse(line);
      }
    }
  }

  /** One API call; `T` is the answer's type (cli/client/responses.ts). */
  async request<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
    return (await this.requestWithStatus<T>(method, path, body)).body;
  }

  /** One API call, with the success status it answered (201 created or 200 replaced, say). */
  async requestWithStatus<T = unknown>(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: T }> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.settings.token) headers.authorization = `Bearer ${this.settings.token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(`${this.settings.baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (error) {
      throw new ServerUnreachableError(`cannot reach ${this.settings.baseUrl}: ${reason(error)}`);
    }
    const text = await response.text();
    let parsed: any;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!response.ok) {
      const envelope = parsed?.error;
      throw new ServerError(
        response.status,
        envelope?.code ?? `http_${response.status}`,
        envelope?.message ?? (text.slice(0, 200) || response.statusText),
        envelope?.hint,
      );
    }
    return { status: response.status, body: parsed as T };
  }
}

/** fetch's own message is "fetch failed"; the cause says why (ECONNREFUSED, ENOTFOUND, …). */
function reason(error: unknown): string {
  return (error as Error & { cause?: Error }).cause?.message ?? (error as Error).message;
}
