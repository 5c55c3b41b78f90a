import type { Context } from 'koa';
import { Errors } from '../errors.ts';

export const MAX_JSON_BODY_BYTES = 1 << 20;
/** No svc body is deeper than a few levels; a deep one is refused before anything recurses into it. */
export const MAX_JSON_DEPTH = 64;

/** The deepest nesting of arrays and objects in JSON text (brackets inside strings do not count). */
export function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === 0x5c) i++;
      else if (char === 0x22) inString = false;
    } else if (char === 0x22) inString = true;
    else if (char === 0x7b || char === 0x5b) deepest = Math.max(deepest, ++depth);
    else if (char === 0x7d || char === 0x5d) depth--;
  }
  return deepest;
}

export function containsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some(containsNul);
  if (value && typeof value === 'object')
    return Object.entries(value).some(([key, inner]) => key.includes('\u0000') || containsNul(inner));
  return false;
}

function isJson(type: string): boolean {
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/**
 * Reads a JSON body. Absent body → undefined; malformed JSON → 400. A body sent without
 * `Content-Type: application/json` is 415, and so is a route whose body is required: a browser
 * cannot send that header cross-origin without asking first (CORS), so a page cannot post here.
 */
/** 415 unless the request says its body is JSON: always when the body is required, else when one is sent. */
export function assertJsonBody(ctx: Context, required: boolean): void {
  const type = ctx.request.type;
  if ((required || ctx.request.length > 0) && !isJson(type)) throw Errors.unsupportedMediaType(type);
}

export async function readJsonBody(ctx: Context, limit = MAX_JSON_BODY_BYTES, required = false): Promise<unknown> {
  const type = ctx.request.type;
  if (required && !isJson(type)) throw Errors.unsupportedMediaType(type);
  const { chunks, size } = await readBytes(ctx.req, ctx.res, limit);
  if (size === 0) return undefined;
  if (!isJson(type)) throw Errors.unsupportedMediaType(type);
  const text = Buffer.concat(chunks).toString('utf8');
  if (nestingDepth(text) > MAX_JSON_DEPTH)
    throw Errors.validation(`request body nests deeper than ${MAX_JSON_DEPTH} levels`, 'no svc field is that deep');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw Errors.validation('request body is not valid JSON', (error as Error).message);
  }
  // PostgreSQL text cannot hold NUL: refused here, once, rather than failing a projection later.
  if (containsNul(parsed))
    throw Errors.validation('request body contains a NUL character (\\u0000)', 'remove it: no svc field accepts it');
  return parsed;
}

/**
 * The request's bytes, up to `limit`. Read by its events: an async iterator over the request cost
 * ~4× as much, on every POST (docs/decisions/0020-dispatching-a-run.md). Past the limit it is 413: what
 * more comes is read and dropped until that answer is sent, and then the connection closes. A
 * request closed before its body ended (its client gone, maybe while it was authorised) rejects.
 */
function readBytes(
  request: Context['req'],
  response: Context['res'],
  limit: number,
): Promise<{ chunks: Buffer[]; size: number }> {
  if (request.readableEnded) return Promise.resolve({ chunks: [], size: 0 });
  if (request.destroyed) return Promise.reject(request.errored ?? closedEarly());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      detach();
      response.shouldKeepAlive = false;
      request.resume();
      reject(Errors.payloadTooLarge(limit));
    };
    const onEnd = () => {
      detach();
      resolve({ chunks, size });
    };
    const onError = (error: Error) => {
      detach();
      reject(error);
    };
    // 'end' comes before 'close' when the body is whole: a close first is a body cut short.
    const onClose = () => onError(closedEarly());
    const detach = () => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
      request.off('close', onClose);
    };
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onError);
    request.on('close', onClose);
  });
}

/** As Node names a stream that closed before its end. */
const closedEarly = () =>
  Object.assign(new Error('the request closed before its body ended'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });

/**
 * Sets a response body, a JSON value as its text. Koa's own path for an object tests it with
 * `instanceof Response`, and the first use of that global loads Node's fetch client (undici, ~13
 * MiB an API otherwise never needs: platform/node-http.ts). Anything but a plain object or an
 * array (text, bytes, a stream) goes to Koa as it is.
 */
export function setResponseBody(ctx: Context, body: unknown): void {
  const prototype = body !== null && typeof body === 'object' ? Object.getPrototypeOf(body) : undefined;
  const json = Array.isArray(body) || prototype === Object.prototype || prototype === null;
  if (!json) {
    ctx.body = body;
    return;
  }
  if (!ctx.response.get('Content-Type')) ctx.type = 'json';
  ctx.body = JSON.stringify(body);
}
