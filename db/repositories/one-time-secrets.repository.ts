// The API's one-time secrets in the database every API replica shares (one_time_secrets): each
// operation is one statement, so replicas asked at once agree without a lock. A secret is spent by a
// conditional DELETE whose affected row count says who spent it: one caller, never two.
import { OneTimeSecretEntity } from '../entities/index.ts';
import type { ReadModel } from '../orm.ts';

export interface SecretSlot {
  slot: string;
  secretHash: string;
  boundTo?: string | null;
  expiresAt: number;
}

export class OneTimeSecretsRepository {
  readonly #readModel: ReadModel;

  constructor(readModel: ReadModel) {
    this.#readModel = readModel;
  }

  /** Puts a secret in its slot, replacing whatever the slot held (one INSERT … ON CONFLICT). */
  async put(secret: SecretSlot): Promise<void> {
    await this.#readModel.em().upsert(OneTimeSecretEntity, { boundTo: null, ...secret });
  }

  /**
   * Spends the slot's secret: true for the one caller whose DELETE removed it, unexpired at `now`,
   * with this hash (and, when given, this binding); false for every other caller.
   */
  async take(slot: string, secretHash: string, now: number, boundTo?: string): Promise<boolean> {
    const where = { slot, secretHash, expiresAt: { $gt: now }, ...(boundTo === undefined ? {} : { boundTo }) };
    return (await this.#readModel.em().nativeDelete(OneTimeSecretEntity, where)) === 1;
  }

  /** Whether the slot holds an unexpired secret (with this hash, when given). */
  async holds(slot: string, now: number, secretHash?: string): Promise<boolean> {
    const where = { slot, expiresAt: { $gt: now }, ...(secretHash === undefined ? {} : { secretHash }) };
    return (await this.#readModel.em().count(OneTimeSecretEntity, where)) > 0;
  }

  /** Empties the slot, whatever it held. */
  async drop(slot: string): Promise<void> {
    await this.#readModel.em().nativeDelete(OneTimeSecretEntity, { slot });
  }

  /** Removes every secret expired at `now`: they open nothing, and the table stays small. */
  async prune(now: number): Promise<void> {
    await this.#readModel.em().nativeDelete(OneTimeSecretEntity, { expiresAt: { $lte: now } });
  }
}
