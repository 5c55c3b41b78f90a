// A project's secrets in the read model, sealed with the process's secrets key (platform/secrets-key.ts):
// sealed here on the way in, opened here on the way out, so no caller ever handles a sealed form.
import { scopesFor, type SecretScope, type SecretStep } from '../../core/project-secrets.ts';
import type { SecretsKey, SecretsKeys } from '../../platform/secrets-key.ts';
import { ProjectSecretEntity, type ProjectSecret } from '../entities/index.ts';
import type { ReadModel } from '../orm.ts';

/** A secret as listed: never its value. */
export type ProjectSecretSummary = Pick<ProjectSecret, 'name' | 'scope' | 'createdAt' | 'updatedAt'>;

/** A sealed value that none of the process's keys opens: the process lacks the key others sealed with. */
export class SecretsKeyMismatchError extends Error {
  constructor(keyId: string) {
    super(
      `a project secret was sealed with the secrets key ${keyId}, which this process does not hold: give every ` +
        'API and worker that shares the database the same SVC_SECRETS_KEY (docs/guide/secrets.md)',
    );
    this.name = 'SecretsKeyMismatchError';
  }
}

const sealContext = (projectId: string, name: string) => `project-secret:${projectId}/${name}`;

export class ProjectSecretsRepository {
  readonly #readModel: ReadModel;
  readonly #keys: SecretsKeys;

  constructor(readModel: ReadModel, keys: SecretsKeys) {
    this.#readModel = readModel;
    this.#keys = keys;
  }

  /** The project's secrets by name, without their values. */
  async list(projectId: string): Promise<ProjectSecretSummary[]> {
    const rows = await this.#readModel
      .em()
      .find(
        ProjectSecretEntity,
        { projectId },
        { orderBy: { name: 'asc' }, fields: ['name', 'scope', 'createdAt', 'updatedAt'] },
      );
    return rows.map(({ name, scope, createdAt, updatedAt }) => ({ name, scope, createdAt, updatedAt }));
  }

  async count(projectId: string): Promise<number> {
    return this.#readModel.em().count(ProjectSecretEntity, { projectId });
  }

  /** Sets the secret (sealed); answers whether it is new, and its row without the value. */
  async put(projectId: string, name: string, scope: SecretScope, value: string) {
    const em = this.#readModel.em();
    const now = new Date();
    const known = await em.findOne(ProjectSecretEntity, { projectId, name }, { fields: ['createdAt'] });
    const row = {
      projectId,
      name,
      scope,
      sealed: this.#keys.current.seal(value, sealContext(projectId, name)),
      keyId: this.#keys.current.id,
      createdAt: known?.createdAt ?? now,
      updatedAt: now,
    };
    // One statement: two replicas setting the same name at once leave one value, not an error.
    await em.upsert(ProjectSecretEntity, row, {
      onConflictFields: ['projectId', 'name'],
      onConflictExcludeFields: ['createdAt'],
    });
    return { created: !known, secret: { name, scope, createdAt: row.createdAt, updatedAt: now } };
  }

  /** Removes the secret: false when there was none. */
  async remove(projectId: string, name: string): Promise<boolean> {
    return (await this.#readModel.em().nativeDelete(ProjectSecretEntity, { projectId, name })) > 0;
  }

  /**
   * The environment a step of the project's runs gets: its scopes' secrets, opened. A run asks for
   * `run`; a setup step, when there is one, will ask for `setup` (core/project-secrets.ts scopesFor).
   */
  async environment(projectId: string, step: SecretStep): Promise<Record<string, string>> {
    const rows = await this.#readModel
      .em()
      .find(ProjectSecretEntity, { projectId, scope: { $in: scopesFor(step) } }, { orderBy: { name: 'asc' } });
    return Object.fromEntries(rows.map((row) => [row.name, this.#open(row)]));
  }

  /** Every value of the project's secrets, whatever their scope: what its runs' output is masked of. */
  async values(projectId: string): Promise<string[]> {
    const rows = await this.#readModel.em().find(ProjectSecretEntity, { projectId });
    return rows.map((row) => this.#open(row));
  }

  /** Every project's values: what a process starting up masks in its log and views. */
  async everyValue(): Promise<string[]> {
    return (await this.#readModel.em().find(ProjectSecretEntity, {})).map((row) => this.#open(row));
  }

  /**
   * Start-up: re-seals with the current key what the previous key (SVC_SECRETS_KEY_PREVIOUS) sealed,
   * then refuses (SecretsKeyMismatchError) when a row is sealed by a key this process does not hold.
   * Answers how many rows were re-sealed.
   */
  async resealWithCurrentKey(): Promise<number> {
    const em = this.#readModel.em();
    const { current, previous } = this.#keys;
    let resealed = 0;
    if (previous && previous.id !== current.id) {
      for (const row of await em.find(ProjectSecretEntity, { keyId: previous.id })) {
        const context = sealContext(row.projectId, row.name);
        const sealed = current.seal(previous.open(row.sealed, context), context);
        // Only a row still sealed by the previous key: a replica that re-sealed it first wins.
        resealed += await em.nativeUpdate(
          ProjectSecretEntity,
          { projectId: row.projectId, name: row.name, keyId: previous.id },
          { sealed, keyId: current.id },
        );
      }
    }
    const held = [current.id, ...(previous ? [previous.id] : [])];
    const foreign = await em.findOne(ProjectSecretEntity, { keyId: { $nin: held } }, { fields: ['keyId'] });
    if (foreign) throw new SecretsKeyMismatchError(foreign.keyId);
    return resealed;
  }

  #open(row: ProjectSecret): string {
    const key: SecretsKey | undefined =
      [this.#keys.current, this.#keys.previous].find((k) => k?.id === row.keyId) ?? undefined;
    if (!key) throw new SecretsKeyMismatchError(row.keyId);
    return key.open(row.sealed, sealContext(row.projectId, row.name));
  }
}
