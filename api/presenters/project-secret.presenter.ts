// A project's secret as the API presents it (api/routes/project-secrets.schema.ts): its name, never its value.
import type { ProjectSecretSummary } from '../../db/repositories/project-secrets.repository.ts';

export function presentProjectSecret(secret: ProjectSecretSummary) {
  return {
    name: secret.name,
    scope: secret.scope,
    createdAt: secret.createdAt.toISOString(),
    updatedAt: secret.updatedAt.toISOString(),
  };
}
