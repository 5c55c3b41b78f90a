// The one way the dashboard talks to svc: fetch with the operator token in the Authorization header
// (never in a URL), JSON in and out, and every failure as an ApiError carrying the envelope's code.
import { token } from './session.ts';
import type { ErrorEnvelope } from './types.ts';

/** A failed call: the envelope's code, message and hint, or a network failure (`network_error`). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  const auth: Record<string, string> = token.value ? { Authorization: `Bearer ${token.value}` } : {};
  return { Accept: 'application/json', ...auth, ...extra };
}

async function failure(response: Response): Promise<ApiError> {
  const envelope = (await response.json().catch(() => null)) as ErrorEnvelope | null;
  if (envelope?.error)
    return new ApiError(response.status, envelope.error.code, envelope.error.message, envelope.error.hint);
  return new ApiError(response.status, 'http_error', `${response.status} ${response.statusText}`);
}

async function send(path: string, init: RequestInit): Promise<Response> {
  try {
    // No cookie goes to the API (the token is the credential); the preview login keeps the one it is given.
    return await fetch(path, { credentials: 'omit', ...init, cache: 'no-store' });
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    throw new ApiError(0, 'network_error', 'svc did not answer', 'check that the server is running');
  }
}

/** GET a JSON resource. */
export async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  const response = await send(path, { headers: headers(), signal });
  if (!response.ok) throw await failure(response);
  return (await response.json()) as T;
}

/** POST, PUT or DELETE with an optional JSON body. */
export async function sendJson<T>(
  method: 'POST' | 'PUT' | 'DELETE',
  path: string,
  body?: unknown,
  extraHeaders: Record<string, string> = {},
  keepCookies = false,
): Promise<T> {
  const init: RequestInit = {
    method,
    headers: headers(extraHeaders),
    ...(keepCookies ? { credentials: 'same-origin' } : {}),
  };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = headers({ 'Content-Type': 'application/json', ...extraHeaders });
  }
  const response = await send(path, init);
  if (!response.ok) throw await failure(response);
  return response.status === 204 ? (undefined as T) : ((await response.json()) as T);
}

/**
 * Reads an NDJSON response line by line until it ends or `signal` aborts. Resolves when the
 * server closes the stream; rejects with an ApiError when the server refuses it.
 */
export async function readNdjson<T>(
  path: string,
  onLine: (line: T) => void,
  signal: AbortSignal,
  onOpen?: () => void,
): Promise<void> {
  const response = await send(path, { headers: headers({ Accept: 'application/x-ndjson' }), signal });
  if (!response.ok) throw await failure(response);
  onOpen?.();
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += value;
    let newline: number;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const text = buffered.slice(0, newline).trim();
      buffered = buffered.slice(newline + 1);
      if (text) onLine(JSON.parse(text) as T);
    }
  }
}

/** A query string from the defined values of `params`. */
export function query(params: Record<string, string | number | undefined | null | false>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params))
    if (value !== undefined && value !== null && value !== false && value !== '') search.set(key, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** GET a resource whole, as a Blob (a download: the token goes in the header, never in a link). */
export async function getBlob(path: string): Promise<Blob> {
  const response = await send(path, { headers: headers({ Accept: '*/*' }) });
  if (!response.ok) throw await failure(response);
  return response.blob();
}
