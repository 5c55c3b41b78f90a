// What a sandbox gets of its project's secrets, and how their values are masked in what it prints:
// the one place the agent's and the setup's launches read them (Temporal carries ids only).
import { maskValues, secretForms } from '../core/redaction.ts';
import type { SecretScope, SecretStep } from '../core/project-secrets.ts';
import type { ReadModel } from '../db/orm.ts';
import { ProjectSecretsRepository } from '../db/repositories/project-secrets.repository.ts';
import { registerSecret } from '../platform/secrets.ts';
import { readJsonIfExists, type LaunchSpec } from '../sandbox/index.ts';

/** The names of `env` that hold the project's secrets as given (a name svc or the agent sets keeps its own value). */
export function launchedSecretNames(env: Record<string, string>, projectEnv: Record<string, string>): string[] {
  return Object.keys(projectEnv).filter((name) => env[name] === projectEnv[name]);
}

/** The secret values a sandbox was launched with, from its launch spec (svc's record, 0600). */
function launchedValues(specPath: string | null): string[] {
  const spec = specPath ? readJsonIfExists<LaunchSpec>(specPath) : null;
  return (spec?.secretNames ?? []).flatMap((name) => (spec?.env[name] ? [spec.env[name]] : []));
}

export function createProjectSecretAccess(
  readModel: ReadModel,
  keys: ConstructorParameters<typeof ProjectSecretsRepository>[1],
) {
  const secrets = new ProjectSecretsRepository(readModel, keys);
  return {
    /**
     * The environment a step of the project's runs gets (the agent: `run` secrets; a setup: `setup`
     * and `run`), read at launch. Each value is masked in this process's log from now on.
     */
    async environment(projectId: string | null, step: SecretStep): Promise<Record<string, string>> {
      if (!projectId) return {};
      const env = await secrets.environment(projectId, step);
      for (const value of Object.values(env)) registerSecret(value);
      return env;
    },

    /** Each secret's scope by its name (no value is opened): what a reference to one may be checked against. */
    async scopes(projectId: string | null): Promise<Map<string, SecretScope>> {
      if (!projectId) return new Map();
      return new Map((await secrets.list(projectId)).map(({ name, scope }) => [name, scope]));
    },

    /**
     * Masks, in a line a sandbox printed, every secret of the project (whatever its scope) and every
     * value the sandbox was launched with (`specPath`, its launch spec): a secret changed or removed
     * since is still masked as the sandbox has it.
     */
    async mask(projectId: string | null, specPath: string | null): Promise<((text: string) => string) | undefined> {
      const current = projectId ? await secrets.values(projectId) : [];
      const forms = [...new Set([...current, ...launchedValues(specPath)])].flatMap(secretForms);
      return forms.length ? (text) => maskValues(text, forms) : undefined;
    },
  };
}

export type ProjectSecretAccess = ReturnType<typeof createProjectSecretAccess>;
