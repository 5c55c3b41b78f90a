// A browser that opens the API's URL of a run or a plan-run (a link the CLI printed, a URL pasted
// into the address bar) is sent to that run's dashboard page: its navigation carries no token, and
// would otherwise read a JSON 401. API clients (a token, or JSON asked for) keep the API's answer.
// The target is built only from an id of the right shape, on this origin: never an open redirect.
import type { Context, Middleware } from 'koa';
import { isId } from '../../core/ids.ts';
import { dashboardPath, type LinkedKind } from '../presenters/links.ts';

const API_PAGES: Record<string, LinkedKind> = { runs: 'run', 'plan-runs': 'planRun' };

/** A browser's navigation: no Authorization, HTML preferred to JSON (curl's `*\/*` is not). */
function isNavigation(ctx: Context): boolean {
  const mode = ctx.get('Sec-Fetch-Mode');
  if (ctx.get('Authorization') || (mode && mode !== 'navigate')) return false;
  return ctx.accepts('json', 'html') === 'html';
}

export function dashboardRedirect(enabled: boolean): Middleware {
  return async (ctx, next) => {
    if (!enabled || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    const [, namespace, id, ...rest] = ctx.path.split('/');
    const kind = API_PAGES[namespace ?? ''];
    if (!kind || id === undefined || rest.length || !isId(kind, id)) return next();
    if (!isNavigation(ctx)) return next();
    ctx.set('Vary', 'Accept, Authorization');
    ctx.status = 303;
    ctx.redirect(dashboardPath(kind, id));
  };
}
