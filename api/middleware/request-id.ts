import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';

const ACCEPTABLE_INCOMING = /^[A-Za-z0-9._:-]{1,128}$/;

/** Every response carries X-Request-ID: the caller's when it is sane, else a fresh one. */
export function requestId(): Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('X-Request-ID');
    const id = ACCEPTABLE_INCOMING.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = id;
    ctx.set('X-Request-ID', id);
    await next();
  };
}
