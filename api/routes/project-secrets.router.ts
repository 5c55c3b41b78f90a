// A project's secrets: set or replace one, list them (names, never values), remove one. docs/guide/secrets.md.
import { defineRoute } from '../route.ts';
import { presentProjectSecret } from '../presenters/project-secret.presenter.ts';
import type { ProjectSecretsService } from '../services/project-secrets.service.ts';
import {
  projectSecretParams,
  projectSecretResponse,
  projectSecretsParams,
  projectSecretsResponse,
  putSecretBody,
} from './project-secrets.schema.ts';

export function projectSecretsRoutes(secrets: ProjectSecretsService) {
  const tags = ['projects'];
  return [
    defineRoute({
      method: 'get',
      path: '/projects/{id}/secrets',
      auth: 'readOperator',
      summary: "The project's secrets: names, scopes and when they changed, never their values",
      tags,
      params: projectSecretsParams,
      responses: { 200: { description: 'The secrets, by name', schema: projectSecretsResponse } },
      handler: async ({ params }) => ({
        status: 200,
        body: { secrets: (await secrets.list(params.id)).map(presentProjectSecret) },
      }),
    }),
    defineRoute({
      method: 'put',
      path: '/projects/{id}/secrets/{name}',
      auth: 'admin',
      summary: "Set a secret of the project: sealed at rest, given to its runs' agents as an environment variable",
      tags,
      params: projectSecretParams,
      body: putSecretBody,
      bodyRequired: true,
      responses: {
        201: { description: 'The secret was set', schema: projectSecretResponse },
        200: { description: 'The secret replaced one of the same name', schema: projectSecretResponse },
      },
      handler: async ({ params, body }) => {
        const { created, secret } = await secrets.put(params.id, params.name, body.scope, body.value);
        return { status: created ? 201 : 200, body: { secret: presentProjectSecret(secret) } };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/projects/{id}/secrets/{name}',
      auth: 'admin',
      summary: 'Remove a secret of the project: runs started from then on no longer get it',
      tags,
      params: projectSecretParams,
      responses: { 204: { description: 'The secret was removed' } },
      handler: async ({ params }) => {
        await secrets.remove(params.id, params.name);
        return { status: 204 };
      },
    }),
  ];
}
