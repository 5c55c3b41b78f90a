// One-time sign-in codes for the dashboard: `svc serve` prints `<api>/setup?code=…` (and `svc login`
// asks the running API for a fresh one, POST /setup-codes), and opening it once (within ten minutes)
// stores the operator token in that browser. The code is not the token: a link seen later (shell
// history, a screenshot) signs nobody in. Kept in the database, by hash, so a link armed by one API
// replica opens on any other behind the same load balancer, and only once across all of them.
import { createHash, randomBytes } from 'node:crypto';
import type { OneTimeSecretsRepository } from '../../db/repositories/one-time-secrets.repository.ts';

export const SETUP_CODE_TTL_MS = 10 * 60_000;

/** The one slot: a new code replaces the last, whichever replica armed it. */
const SLOT = 'setup';
const CODE_SHAPE = /^[A-Za-z0-9_-]{24}$/;

const hashOf = (code: string) => createHash('sha256').update(code).digest('hex');

/** The instance's armed setup code, if any: at most one, spent on first use or after ten minutes. */
export class SetupCodes {
  readonly #secrets: OneTimeSecretsRepository;
  readonly #now: () => number;

  constructor(secrets: OneTimeSecretsRepository, now: () => number = Date.now) {
    this.#secrets = secrets;
    this.#now = now;
  }

  /** Arms a fresh code (replacing any earlier one) and answers it with when it expires. */
  async arm(): Promise<{ code: string; expiresAt: number }> {
    const code = randomBytes(18).toString('base64url');
    const expiresAt = this.#now() + SETUP_CODE_TTL_MS;
    await this.#secrets.put({ slot: SLOT, secretHash: hashOf(code), expiresAt });
    return { code, expiresAt };
  }

  /** Whether a code is armed and unexpired (else GET /setup answers 404). */
  armed(): Promise<boolean> {
    return this.#secrets.holds(SLOT, this.#now());
  }

  /** Spends the code: true once, on one replica, for the armed one within its ten minutes; false otherwise. */
  async redeem(code: string): Promise<boolean> {
    if (!CODE_SHAPE.test(code)) return false;
    return this.#secrets.take(SLOT, hashOf(code), this.#now());
  }
}
