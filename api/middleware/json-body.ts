import type { Context } from 'koa';
import { Errors } from '../errors.ts';

export const MAX_JSON_BODY_BYTES = 1 << 20;

export function containsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some(containsNul);
  if (value && typeof value === 'object') return Object.entries(value).some(([key, inner]) => key.includes('\u0000') || containsNul(inner));
  return false;
}

/** Reads a JSON body. Absent body → undefined; anything but JSON, or malformed JSON → 400/415. */
export async function readJsonBody(ctx: Context, limit = MAX_JSON_BODY_BYTES): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw Errors.payloadTooLarge(limit);
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return undefined;
  const type = ctx.request.type;
  if (type && type !== 'application/json' && !type.endsWith('+json')) throw Errors.unsupportedMediaType(type);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (error) {
    throw Errors.validation('request body is not valid JSON', (error as Error).message);
  }
  // PostgreSQL text cannot hold NUL: refused here, once, rather than failing a projection later.
  if (containsNul(parsed)) throw Errors.validation('request body contains a NUL character (\\u0000)', 'remove it: no svc field accepts it');
  return parsed;
}
