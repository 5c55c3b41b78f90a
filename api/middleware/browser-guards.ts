// What a web page must never do to svc through a visitor's browser. A state-changing request that
// a browser marks as coming from another site (Origin, or Sec-Fetch-Site for requests that carry
// no Origin, such as an <img>) is refused in every auth mode (CSRF: a page the operator visits
// cannot dispatch, cancel, steer or drain an inbox). With --no-auth, where every caller is the
// operator, the Host must also be a loopback name, so a hostile domain re-pointed at 127.0.0.1
// (DNS rebinding) cannot read or drive the API either.
import type { Context, Middleware } from 'koa';
import { isLoopbackHost } from '../../platform/config.ts';
import { Errors } from '../errors.ts';

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

/** With --no-auth: a Host that is not a loopback name is refused, for every request. */
export function browserGuards(options: { noAuth: boolean }): Middleware {
  return async (ctx, next) => {
    if (options.noAuth && !isLoopbackHost(hostName(ctx.get('Host')))) throw Errors.hostForbidden(ctx.get('Host'));
    await next();
  };
}

/** Refuses a state-changing request a browser sent for another site. Other clients send neither header. */
export function assertSameSite(ctx: Context): void {
  const origin = ctx.get('Origin');
  if (origin && originHost(origin) !== ctx.get('Host').toLowerCase()) throw Errors.originForbidden(origin);
  const site = ctx.get('Sec-Fetch-Site');
  if (site === 'cross-site' || site === 'same-site') throw Errors.originForbidden(`a ${site} request`);
}
