// The `Idempotency-Key` request header (POST /runs, POST /webhooks): the same key repeats the same
// request, answered with what the first one made (docs/api.md).
import type { Context } from 'koa';
import { Errors } from './errors.ts';

/** The request's key, or undefined without one; a malformed key is a validation error. */
export function idempotencyKeyOf(ctx: Context): string | undefined {
  const key = ctx.get('Idempotency-Key') || undefined;
  if (key !== undefined && !/^[\x21-\x7e]{1,255}$/.test(key))
    throw Errors.validation('invalid Idempotency-Key header', 'use 1 to 255 visible ASCII characters');
  return key;
}
