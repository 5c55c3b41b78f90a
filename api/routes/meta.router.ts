import { z } from 'zod';
import { buildOpenApiDocument } from '../openapi.ts';
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
const readyResponse = z.object({ ok: z.boolean(), checks: z.array(readyCheck) });

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
      auth: 'readOperator',
      summary: 'Readiness: the read model and Temporal are reachable',
      tags: ['meta'],
      responses: {
        200: { description: 'Ready', schema: readyResponse },
        503: { description: 'Not ready; the failing checks say why', schema: readyResponse },
      },
      handler: async () => {
        const checks = await deps.readinessChecks();
        const ok = checks.every((check) => check.ok);
        return { status: ok ? 200 : 503, body: { ok, checks } };
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
