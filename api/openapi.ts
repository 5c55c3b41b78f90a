// The OpenAPI 3.1 document, generated from the same route declarations and zod schemas that
// validate every request: there is no hand-written copy to drift. Served at GET /openapi.json and
// written to docs/openapi.json (scripts/write-openapi.ts; a test fails when that file is stale).
import { z, type ZodType } from 'zod';
import type { RouteSpec } from './route.ts';

const ERROR_ENVELOPE = z.object({
  error: z.object({ code: z.string(), message: z.string(), hint: z.string().optional() }),
});

type JsonSchema = Record<string, unknown>;

function jsonSchema(schema: ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
  }) as JsonSchema;
  return rest;
}

/** The properties of an object schema (params, query), each with whether it is required. */
function objectProperties(schema: ZodType): { name: string; schema: JsonSchema; required: boolean }[] {
  const document = jsonSchema(schema, 'input');
  const properties = (document.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((document.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    schema: property,
    required: required.has(name),
  }));
}

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
});

const POLICY_NOTES: Record<string, string> = {
  anonymous: 'No credential needed.',
  readPublic: 'Operator token; in public mode (SVC_AUTH=public) also anonymous spectators, with redacted views.',
  readOperator: 'Operator token.',
  dispatch: 'Operator token.',
  admin: 'Operator token.',
};

/** `/runs/{id}/cancel` → `RunsIdCancel`: the path part of an operation's id. */
function camelPath(path: string): string {
  return path
    .replace(/[{}]/g, '')
    .replace(/[^A-Za-z0-9]+(.)?/g, (_match, next: string | undefined) => (next ? next.toUpperCase() : ''));
}

function operation(route: RouteSpec<any, any, any>) {
  const parameters = [
    ...(route.params
      ? objectProperties(route.params).map((property) => ({
          name: property.name,
          in: 'path',
          required: true,
          schema: property.schema,
        }))
      : []),
    ...(route.query
      ? objectProperties(route.query).map((property) => ({
          name: property.name,
          in: 'query',
          required: property.required,
          schema: property.schema,
        }))
      : []),
  ];
  const responses: Record<string, unknown> = {};
  for (const [status, response] of Object.entries(route.responses)) {
    responses[status] = response.schema
      ? {
          description: response.description,
          content: { [response.contentType ?? 'application/json']: { schema: jsonSchema(response.schema, 'output') } },
        }
      : { description: response.description };
  }
  if (route.params || route.query || route.body) {
    responses['400'] ??= errorResponse('Invalid request (validation_error and the other 400 codes)');
    // A route whose own 400 is a page (text/html) still refuses malformed input before its handler
    // runs, with the JSON error envelope: both are documented.
    const declared = responses['400'] as { content?: Record<string, unknown> };
    if (declared.content && !declared.content['application/json'])
      declared.content['application/json'] = errorResponse('').content['application/json'];
  }
  if (route.auth !== 'anonymous') {
    responses['401'] ??= errorResponse('Missing or invalid credential');
    responses['403'] ??= errorResponse('The credential may not use this route');
  }
  if (route.auth === 'readPublic')
    responses['429'] ??= errorResponse(
      'rate_limited: a spectator (public mode) past its requests per second or in progress (Retry-After)',
    );
  if (route.params) responses['404'] ??= errorResponse('No such resource');
  responses.default = errorResponse('Any other failure, as the error envelope');
  const runToken =
    route.runToken === 'any' ? "Also any live run's per-run token." : "Also the run's own per-run token.";
  const auth = route.runToken ? `${POLICY_NOTES[route.auth]} ${runToken}` : POLICY_NOTES[route.auth];
  return {
    operationId: `${route.method}${camelPath(route.path)}`,
    summary: route.summary,
    description: `Auth: ${auth}`,
    tags: route.tags,
    security: route.auth === 'anonymous' ? [] : [{ bearer: [] }],
    ...(parameters.length ? { parameters } : {}),
    ...(route.body
      ? {
          requestBody: {
            required: Boolean(route.bodyRequired),
            content: { 'application/json': { schema: jsonSchema(route.body, 'input') } },
          },
        }
      : {}),
    responses,
  };
}

export function buildOpenApiDocument(routes: RouteSpec<any, any, any>[], version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) (paths[route.path] ??= {})[route.method] = operation(route);
  return {
    openapi: '3.1.0',
    info: {
      title: 'svc — the Agent Run Control Service',
      version,
      description: 'Every failure answers {error:{code,message,hint?}} with a stable snake_case code.',
    },
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'The operator token, or a per-run token (svc1.<runId>.<hmac>) on the run callback routes.',
        },
      },
      schemas: { ErrorEnvelope: jsonSchema(ERROR_ENVELOPE, 'output') },
    },
  };
}
