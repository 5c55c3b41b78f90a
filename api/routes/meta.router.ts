import { z } from 'zod';
import { buildOpenApiDocument } from '../openapi.ts';
import { Errors, type ApiError } from '../errors.ts';
import { defineRoute, type RouteSpec } from '../route.ts';
import { whoamiResponse } from './meta.schema.ts';

export interface ReadinessCheck {
  name: string;
  ok: boolean;
  message?: string;
  hint?: string;
}

export interface MetaDeps {
  version: string;
  readinessChecks(): Promise<ReadinessCheck[]>;
}

const readyCheck = z.object({
  name: z.string(),
  ok: z.boolean(),
  message: z.string().optional(),
  hint: z.string().optional(),
});
const readyResponse = z.object({ ok: z.literal(true), checks: z.array(readyCheck) });

/** What GET /readyz answers when a check fails: the catalogue's error for that dependency. */
const NOT_READY: Record<string, (hint: string) => ApiError> = {
  db_reachable: Errors.databaseUnavailable,
  temporal_reachable: Errors.temporalUnavailable,
};

/** Answers from one round of checks for a second: a public route, polled by every dashboard, stays cheap. */
const READINESS_REUSE_MS = 1000;

function sharedReadiness(check: () => Promise<ReadinessCheck[]>): () => Promise<ReadinessCheck[]> {
  let last: { at: number; checks: Promise<ReadinessCheck[]> } | undefined;
  return () => {
    if (!last || Date.now() - last.at > READINESS_REUSE_MS) last = { at: Date.now(), checks: check() };
    return last.checks;
  };
}

/** GET /openapi.json: the document of every route this server serves, itself included. */
export function openApiRoute(routes: () => RouteSpec<any, any, any>[], version: string) {
  let document: unknown;
  return defineRoute({
    method: 'get',
    path: '/openapi.json',
    auth: 'anonymous',
    summary: 'This API as an OpenAPI 3.1 document',
    tags: ['meta'],
    responses: { 200: { description: 'The OpenAPI document', schema: z.record(z.string(), z.unknown()) } },
    handler: async () => ({ status: 200, body: (document ??= buildOpenApiDocument(routes(), version)) }),
  });
}

export function metaRoutes(deps: MetaDeps) {
  const readiness = sharedReadiness(() => deps.readinessChecks());
  return [
    defineRoute({
      method: 'get',
      path: '/healthz',
      auth: 'anonymous',
      summary: 'Liveness: the API process answers',
      tags: ['meta'],
      responses: { 200: { description: 'Alive', schema: z.object({ ok: z.literal(true) }) } },
      handler: async () => ({ status: 200, body: { ok: true } }),
    }),
    defineRoute({
      method: 'get',
      path: '/readyz',
      auth: 'anonymous',
      summary: 'Readiness: the read model and Temporal are reachable',
      tags: ['meta'],
      responses: {
        200: { description: 'Ready', schema: readyResponse },
        503: {
          description:
            'Not ready: database_unavailable (the read model does not answer) or runtime_unreachable (Temporal ' +
            'does not), as the error envelope with Retry-After',
        },
      },
      handler: async () => {
        const checks = await readiness();
        const failing = checks.find((check) => !check.ok);
        if (failing) throw (NOT_READY[failing.name] ?? Errors.temporalUnavailable)(failing.hint ?? '');
        return { status: 200, body: { ok: true as const, checks } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/whoami',
      auth: 'readPublic',
      runToken: 'any',
      summary: 'Who the caller is and what it may do',
      tags: ['meta'],
      responses: {
        200: {
          description: 'The identity',
          schema: whoamiResponse,
        },
      },
      handler: async ({ identity, ctx }) => {
        ctx.set('Vary', 'Authorization');
        return {
          status: 200,
          // A run token is no capability of the API's: it reaches its run's callback routes only.
          body:
            identity?.kind === 'run'
              ? { identity: 'run', capabilities: [], runId: identity.runId }
              : { identity: identity?.kind ?? 'anonymous', capabilities: identity?.capabilities ?? [] },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/version',
      auth: 'anonymous',
      summary: 'The server version',
      tags: ['meta'],
      responses: { 200: { description: 'Version', schema: z.object({ version: z.string() }) } },
      handler: async () => ({ status: 200, body: { version: deps.version } }),
    }),
  ];
}
