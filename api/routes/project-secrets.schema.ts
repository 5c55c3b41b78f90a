// Request and response schemas of a project's secrets routes: they validate requests and document the API.
import { z } from 'zod';
import { FIELD_LIMITS } from '../../core/field-limits.ts';
import {
  MAX_SECRET_VALUE_BYTES,
  SECRET_SCOPES,
  secretNameRefusal,
  secretValueRefusal,
} from '../../core/project-secrets.ts';

export const projectSecretsParams = z.object({ id: z.string().min(1).max(FIELD_LIMITS.idParam) }).strict();

export const projectSecretParams = z
  .object({
    id: z.string().min(1).max(FIELD_LIMITS.idParam),
    name: z
      .string()
      .max(256)
      .superRefine((name, ctx) => {
        const refusal = secretNameRefusal(name);
        if (refusal) ctx.addIssue({ code: 'custom', message: refusal });
      })
      .describe('An environment variable name: ^[A-Z_][A-Z0-9_]{0,127}$, none svc sets in the sandbox itself'),
  })
  .strict();

export const putSecretBody = z
  .object({
    value: z
      .string()
      .superRefine((value, ctx) => {
        const refusal = secretValueRefusal(value);
        if (refusal) ctx.addIssue({ code: 'custom', message: refusal });
      })
      .describe(`The value (at most ${MAX_SECRET_VALUE_BYTES} bytes); never answered back`),
    scope: z
      .enum(SECRET_SCOPES)
      .default('run')
      .describe('run: every run of the project gets it; setup: kept for a repository setup step (none yet)'),
  })
  .strict();

export const projectSecretSchema = z.object({
  name: z.string(),
  scope: z.enum(SECRET_SCOPES),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const projectSecretResponse = z.object({ secret: projectSecretSchema });
export const projectSecretsResponse = z.object({ secrets: z.array(projectSecretSchema) });
