import type { Middleware } from 'koa';
import { logger } from '../../platform/logger.ts';

/** Route templates whose `{id}` is a workflow id: runs (run id = workflow id) and plan-runs. */
const WORKFLOW_ROUTES: [RegExp, string][] = [
  [/^\/runs\/:id(\/|$)/, 'runId'],
  [/^\/plan-runs\/:id(\/|$)/, 'planRunId'],
];

/**
 * One structured line per request once it is answered: request id, route template (never the
 * query string, which may carry a setup code), status and duration, plus the run or plan-run id
 * and workflow id when the route names one. Credentials never reach it (they are headers).
 */
export function requestLog(): Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const route = (ctx as { _matchedRoute?: string })._matchedRoute;
      const id = (ctx as { params?: Record<string, string> }).params?.id;
      const subject = route && id ? WORKFLOW_ROUTES.find(([pattern]) => pattern.test(route)) : undefined;
      logger().info(
        {
          requestId: ctx.state.requestId,
          method: ctx.method,
          route: route ?? null,
          status: ctx.status,
          durationMs: Math.round((performance.now() - started) * 10) / 10,
          ...(subject ? { [subject[1]]: id, workflowId: id } : {}),
        },
        'request',
      );
    }
  };
}
