// A route is declared once, with everything the API needs to serve and document it: method, path,
// auth policy, zod schemas for params/query/body/response, and a thin handler (call → present).
// Validation and auth happen here, so handlers never try/catch and never see bad input.
import type { ServerResponse } from 'node:http';
import type { Context } from 'koa';
import type { Router } from '@koa/router';
import { type z, type ZodType } from 'zod';
import { authorize, type AuthPolicy, type AuthSettings, type Identity } from './auth.ts';
import { assertSameSite } from './middleware/browser-guards.ts';
import { ApiError, Errors } from './errors.ts';
import { svcMetrics } from '../platform/metrics.ts';
import { containsNul, MAX_JSON_BODY_BYTES, readJsonBody, setResponseBody } from './middleware/json-body.ts';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface RouteResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Send the status and headers now (a held-open stream whose first line may come much later). */
  flushHeaders?: boolean;
  /**
   * The handler writes the body itself, straight to the response, after the status and headers
   * are sent (a held-open stream: no Readable and no pipe per client). Koa then leaves it alone,
   * so nothing ends it but the handler's own code: a HEAD request must be answered with `body`.
   */
  writeBody?: (response: ServerResponse) => void;
}

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  identity: Identity | undefined;
  ctx: Context;
}

export interface RouteSpec<P = unknown, Q = unknown, B = unknown> {
  method: HttpMethod;
  /** OpenAPI form: /runs/{id}. */
  path: string;
  auth: AuthPolicy;
  /** Also accept the path run's own per-run token (the in-sandbox callback routes); 'any': every live run token. */
  runToken?: boolean | 'any';
  /** A GET that changes state (the inbox claims messages): guarded against other sites like a POST. */
  changesState?: boolean;
  summary: string;
  tags: string[];
  params?: ZodType<P>;
  query?: ZodType<Q>;
  body?: ZodType<B>;
  bodyRequired?: boolean;
  /** Largest accepted body, in bytes (default 1 MiB). */
  bodyLimit?: number;
  /** Reads the body itself (streaming a large member to disk); its result is validated by `body`. */
  readBody?: (ctx: Context, limit: number) => Promise<unknown>;
  responses: Record<number, { description: string; schema?: ZodType; contentType?: string }>;
  handler(input: RouteInput<P, Q, B>): Promise<RouteResult>;
}

/**
 * Declares a route once: method, path, auth policy, zod schemas and a thin handler. mountRoutes
 * serves it (auth → validate → handler) and the OpenAPI document is generated from it.
 */
export function defineRoute<P = undefined, Q = undefined, B = undefined>(spec: RouteSpec<P, Q, B>): RouteSpec<P, Q, B> {
  return spec;
}

function describeIssue(issue: z.core.$ZodIssue, where: string): string {
  const field = issue.path.length ? issue.path.join('.') : where;
  return `field "${field}": ${issue.message}`;
}

export function parseOrThrow<T>(schema: ZodType<T>, value: unknown, where: 'body' | 'query' | 'path'): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues;
  throw Errors.validation(
    `invalid request ${where}`,
    issues
      .slice(0, 5)
      .map((issue) => describeIssue(issue, where))
      .join('; '),
  );
}

export function toKoaPath(openApiPath: string): string {
  return openApiPath.replace(/\{(\w+)\}/g, ':$1');
}

/** The routes whose latency is dispatch latency (svc_dispatch_seconds), by what they dispatch. */
const DISPATCH_ROUTES: Record<string, string> = { 'post /runs': 'run', 'post /plan-runs': 'plan_run' };

export function mountRoutes(router: Router, routes: RouteSpec<any, any, any>[], auth: AuthSettings): void {
  for (const route of routes) {
    const serve = async (ctx: Context) => {
      if (route.method !== 'get' || route.changesState) assertSameSite(ctx);
      const rawParams = (ctx as unknown as { params: Record<string, string> }).params;
      const identity = await authorize(ctx, { policy: route.auth, runToken: route.runToken }, auth, rawParams.id);
      if (containsNul(rawParams) || containsNul({ ...ctx.query }))
        throw Errors.validation('the path or query contains a NUL character', 'remove it: no svc parameter accepts it');
      const params = route.params ? parseOrThrow(route.params, rawParams, 'path') : undefined;
      const query = route.query ? parseOrThrow(route.query, { ...ctx.query }, 'query') : undefined;
      let body: unknown;
      if (route.body) {
        const raw = route.readBody
          ? await route.readBody(ctx, route.bodyLimit ?? MAX_JSON_BODY_BYTES)
          : await readJsonBody(ctx, route.bodyLimit, route.bodyRequired);
        if (raw === undefined && route.bodyRequired)
          throw Errors.validation('request body is required', 'send a JSON object');
        // No body at all is an empty object; a body that is JSON `null` is not an object (400).
        body = parseOrThrow(route.body, raw === undefined ? {} : raw, 'body');
      }
      const result = await route.handler({ params, query, body, identity, ctx });
      ctx.status = result.status;
      for (const [name, value] of Object.entries(result.headers ?? {})) ctx.set(name, value);
      if (result.body !== undefined) setResponseBody(ctx, result.body);
      if (result.flushHeaders) ctx.res.flushHeaders();
      if (result.writeBody) {
        ctx.respond = false;
        ctx.res.writeHead(result.status);
        ctx.res.flushHeaders();
        result.writeBody(ctx.res);
      }
    };
    const dispatchKind = DISPATCH_ROUTES[`${route.method} ${route.path}`];
    router[route.method](toKoaPath(route.path), async (ctx: Context) => {
      const started = performance.now();
      let status = 500;
      try {
        await serve(ctx);
        status = ctx.status;
      } catch (error) {
        if (error instanceof ApiError) status = error.status;
        throw error;
      } finally {
        const seconds = (performance.now() - started) / 1000;
        svcMetrics.httpRequestSeconds.observe({ method: route.method, route: route.path, status }, seconds);
        if (dispatchKind && status < 300) svcMetrics.dispatchSeconds.observe({ kind: dispatchKind }, seconds);
      }
    });
  }
}
