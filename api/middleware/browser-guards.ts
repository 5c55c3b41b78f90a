// What a web page must never do to svc through a visitor's browser. A state-changing request that
// a browser marks as coming from another origin is refused in every auth mode (CSRF: a page the
// operator visits cannot dispatch, cancel or steer). With --no-auth, where every caller is the
// operator, the Host must also be a loopback name, so a hostile domain re-pointed at 127.0.0.1
// (DNS rebinding) cannot read or drive the API either.
import type { Middleware } from 'koa';
import { isLoopbackHost } from '../../stack/config.ts';
import { Errors } from '../errors.ts';

const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The host name of a Host header (`127.0.0.1:8080`, `[::1]:8080`, `localhost`). */
function hostName(host: string): string {
  return host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d+$/, '');
}

/** The host of an Origin (either scheme: a TLS proxy may sit in front); `null` origins have none. */
function originHost(origin: string): string | undefined {
  try {
    return new URL(origin).host.toLowerCase();
  } catch {
    return undefined;
  }
}

export function browserGuards(options: { noAuth: boolean }): Middleware {
  return async (ctx, next) => {
    if (options.noAuth && !isLoopbackHost(hostName(ctx.get('Host')))) throw Errors.hostForbidden(ctx.get('Host'));
    const origin = ctx.get('Origin');
    // Browsers send Origin on every cross-origin request that can change state; other clients send none.
    if (origin && STATE_CHANGING.has(ctx.method) && originHost(origin) !== ctx.get('Host').toLowerCase()) throw Errors.originForbidden(origin);
    await next();
  };
}
