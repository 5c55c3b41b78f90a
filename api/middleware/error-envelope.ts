import type { Middleware } from 'koa';
import { isDatabaseUnavailable } from '../../db/availability.ts';
import { ApiError, Errors } from '../errors.ts';
import { svcMetrics } from '../../platform/metrics.ts';
import { setResponseBody } from './json-body.ts';

export interface ErrorLogger {
  error(message: string, meta: Record<string, unknown>): void;
}

/** Turns every failure (ours, Koa's, or a bug) into the error envelope; unmatched routes become 404. */
export function errorEnvelope(logger: ErrorLogger): Middleware {
  return async (ctx, next) => {
    let failure: ApiError | undefined;
    try {
      await next();
      if (ctx.body === undefined || ctx.body === null) {
        if (ctx.status === 404) failure = Errors.routeNotFound(ctx.method, ctx.path);
        // The router's allowedMethods() marks a known path asked with the wrong method.
        else if (ctx.status === 405 || ctx.status === 501)
          failure = Errors.methodNotAllowed(ctx.method, ctx.path, ctx.response.get('Allow') || 'none');
      }
    } catch (error) {
      failure = toApiError(error, ctx.state.requestId as string);
      // Typed failures say what happened; only a bug (an untyped throw) needs its stack in the log.
      const detail =
        error instanceof ApiError ? `${error.code}: ${error.message}` : String((error as Error)?.stack ?? error);
      if (failure.status >= 500)
        logger.error('request failed', {
          requestId: ctx.state.requestId,
          method: ctx.method,
          path: ctx.path,
          error: detail,
        });
    }
    if (!failure) return;
    svcMetrics.apiFailures.inc({ code: failure.code });
    if (failure.code === 'event_stream_capacity') svcMetrics.eventStreamRefusals.inc();
    ctx.status = failure.status;
    for (const [name, value] of Object.entries(failure.headers)) ctx.set(name, value);
    setResponseBody(ctx, failure.toEnvelope());
  };
}

function toApiError(error: unknown, requestId: string): ApiError {
  if (error instanceof ApiError) return error;
  if (isDatabaseUnavailable(error)) return Errors.databaseUnavailable(String((error as Error)?.message ?? error));
  // Koa and its helpers throw http-errors with an `expose`d status for client mistakes.
  const status = (error as { status?: number; expose?: boolean })?.status;
  if (typeof status === 'number' && status >= 400 && status < 500 && (error as { expose?: boolean }).expose) {
    return new ApiError(status, status === 404 ? 'not_found' : 'validation_error', (error as Error).message);
  }
  return Errors.internal(requestId);
}
