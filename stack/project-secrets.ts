// Start-up of project secrets: the key (SVC_SECRETS_KEY or the data directory's key file), a
// rotation's re-seal (SVC_SECRETS_KEY_PREVIOUS), the refusal to start beside processes that seal
// with another key, and every stored value masked in this process's log and views.
import type { ReadModel } from '../db/orm.ts';
import { ProjectSecretsRepository, SecretsKeyMismatchError } from '../db/repositories/project-secrets.repository.ts';
import { ConfigurationError } from '../platform/config-error.ts';
import { dataPaths, type SvcConfig } from '../platform/config.ts';
import { loadSecretsKeys, type SecretsKeys } from '../platform/secrets-key.ts';
import { registerSecret } from '../platform/secrets.ts';

export async function openProjectSecrets(
  config: Pick<SvcConfig, 'secretsKey' | 'dataDir'>,
  readModel: ReadModel,
  log: (line: string) => void,
): Promise<SecretsKeys> {
  const keys = loadSecretsKeys(config.secretsKey, dataPaths.secretsKey(config.dataDir));
  for (const key of [keys.current, keys.previous]) registerSecret(key?.toBase64());
  const rows = new ProjectSecretsRepository(readModel, keys);
  try {
    const resealed = await rows.resealWithCurrentKey();
    if (resealed > 0) log(`project secrets: ${resealed} re-sealed with the key ${keys.current.id}`);
    for (const value of await rows.everyValue()) registerSecret(value);
  } catch (error) {
    if (error instanceof SecretsKeyMismatchError) throw new ConfigurationError(error.message);
    throw error;
  }
  return keys;
}
