// The Koa application: request id → request log → error envelope → Host guard → a browser's
// navigation to a run or plan-run sent to its dashboard page → dashboard fallback
// (outside the API's namespaces) → routes (each with its own same-site guard, auth policy and validation) →
// 404/405 for everything else.
import Koa from 'koa';
import type * as KoaRouter from '@koa/router';
import { createRequire } from 'node:module';
import type { AuthSettings } from './auth.ts';
import { browserGuards } from './middleware/browser-guards.ts';
import { apiNamespaces, dashboard, type DashboardFiles } from './middleware/dashboard.ts';
import { dashboardRedirect } from './middleware/dashboard-redirect.ts';
import { errorEnvelope, type ErrorLogger } from './middleware/error-envelope.ts';
import { requestId } from './middleware/request-id.ts';
import { requestLog } from './middleware/request-log.ts';
import { mountRoutes, type RouteSpec } from './route.ts';

// Its ESM build imports node:http, which would load Node's fetch client in every API (platform/node-http.ts).
const { Router } = createRequire(import.meta.url)('@koa/router') as typeof KoaRouter;
type Router = KoaRouter.Router;

export interface ApiAppDeps {
  auth: AuthSettings;
  routes: RouteSpec<any, any, any>[];
  logger: ErrorLogger;
  /** The built web dashboard (web/dist), served outside the API's namespaces; null: none. */
  dashboard?: DashboardFiles | null;
  /** Host names the API answers to besides loopback names and addresses (SvcConfig.allowedHosts). */
  allowedHosts?: readonly string[];
}

/** Every route the API serves, mounted: the app uses this router and nothing else. */
export function apiRouter(deps: Pick<ApiAppDeps, 'routes' | 'auth'>): Router {
  const router = new Router();
  mountRoutes(router, deps.routes, deps.auth);
  return router;
}

export function createApiApp(deps: ApiAppDeps): Koa {
  const app = new Koa({ proxy: false });
  // Koa's own error printing would duplicate what the envelope middleware logs.
  app.silent = true;
  const router = apiRouter(deps);
  app.use(requestId());
  app.use(requestLog());
  app.use(errorEnvelope(deps.logger));
  app.use(browserGuards({ allowedHosts: deps.allowedHosts ?? [] }));
  app.use(dashboardRedirect(Boolean(deps.dashboard)));
  app.use(dashboard(deps.dashboard ?? null, apiNamespaces(deps.routes.map((route) => route.path))));
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
