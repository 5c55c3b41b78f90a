import type { Context } from 'koa';
import { Errors } from '../errors.ts';

export const MAX_JSON_BODY_BYTES = 1 << 20;

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
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (error) {
    throw Errors.validation('request body is not valid JSON', (error as Error).message);
  }
}
