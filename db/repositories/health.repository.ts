// The read model's liveness, for the readiness checks (GET /readyz, and the ones GET /ops/overview reports).
import type { ReadModel } from '../orm.ts';

/** Whether the database answers at all: one trivial statement, no table read. */
export class HealthRepository {
  readonly #readModel: ReadModel;

  constructor(readModel: ReadModel) {
    this.#readModel = readModel;
  }

  /** Resolves when the database answered `select 1`, rejects with the driver's error when it did not. */
  ping(): Promise<unknown> {
    return this.#readModel.em().getConnection().execute('select 1');
  }
}
