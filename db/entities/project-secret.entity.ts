import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { SecretScope } from '../../core/project-secrets.ts';

// A project's secret, sealed (AES-256-GCM, platform/secrets-key.ts): the table never holds a value
// in the clear. Written by the API (PUT /projects/{id}/secrets/{name}), read by the worker that
// launches a run's sandbox, re-sealed at start-up during a key rotation.
export const ProjectSecretEntity = defineEntity({
  name: 'ProjectSecret',
  tableName: 'project_secrets',
  properties: {
    projectId: p.string().primary().length(32),
    name: p.string().primary().length(128),
    scope: p.string().$type<SecretScope>().length(8),
    /** `v1:<base64 of iv | tag | ciphertext>`, bound to its project and name. */
    sealed: p.text(),
    /** Which key sealed it (SecretsKey.id). */
    keyId: p.string().length(16),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

export type ProjectSecret = InferEntity<typeof ProjectSecretEntity>;
