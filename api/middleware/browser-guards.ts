// What a web page must never do to svc through a visitor's browser. A state-changing request that
// a browser marks as coming from another site (Origin, or Sec-Fetch-Site for requests that carry
// no Origin, such as an <img>) is refused in every auth mode (CSRF: a page the operator visits
// cannot dispatch, cancel, steer or drain an inbox). In every auth mode too, the Host must be one
// svc is reached at, so a hostile domain re-pointed at svc's address (DNS rebinding) can read
// nothing, not even the anonymous pages (the GitHub App's registration, public mode's reads).
import type { Context, Middleware } from 'koa';
import { isIP } from 'node:net';
import { isLoopbackHost, normalHostName } from '../../platform/config.ts';
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

/** Routes that reveal nothing, for probes that name the pod's address or a name of their own. */
const ANY_HOST = new Set(['/healthz', '/readyz']);

/**
 * Whether svc answers to this Host name: a loopback name, an address (a page can be served from an
 * address only by whoever holds it, so an address cannot be re-pointed the way a name can), or a
 * name svc was told it is reached at (SVC_PUBLIC_URL, SVC_API_URL, SVC_HOST, SVC_ALLOWED_HOSTS).
 */
export function isAllowedHost(name: string, allowed: ReadonlySet<string>): boolean {
  const host = normalHostName(name);
  if (host === '') return false;
  if (isLoopbackHost(host) || allowed.has(host)) return true;
  return isIP(host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host) !== 0;
}

/** A request whose Host svc is not reached at is refused (421), in every auth mode, but for the health checks. */
export function browserGuards(options: { allowedHosts: readonly string[] }): Middleware {
  const allowed = new Set(options.allowedHosts.map(normalHostName));
  return async (ctx, next) => {
    const host = ctx.get('Host');
    if (!ANY_HOST.has(ctx.path) && !isAllowedHost(hostName(host), allowed)) throw Errors.misdirectedRequest(host);
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
