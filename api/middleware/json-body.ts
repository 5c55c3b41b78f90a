import type { Context } from 'koa';
import { Errors } from '../errors.ts';

export const MAX_JSON_BODY_BYTES = 1 << 20;

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
export async function readJsonBody(ctx: Context, limit = MAX_JSON_BODY_BYTES, required = false): Promise<unknown> {
  const type = ctx.request.type;
  if (required && !isJson(type)) throw Errors.unsupportedMediaType(type);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw Errors.payloadTooLarge(limit);
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return undefined;
  if (!isJson(type)) throw Errors.unsupportedMediaType(type);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (error) {
    throw Errors.validation('request body is not valid JSON', (error as Error).message);
  }
  // PostgreSQL text cannot hold NUL: refused here, once, rather than failing a projection later.
  if (containsNul(parsed))
    throw Errors.validation('request body contains a NUL character (\\u0000)', 'remove it: no svc field accepts it');
  return parsed;
}
