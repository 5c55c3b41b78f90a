// One-time sign-in codes for the dashboard: `svc serve` prints `<api>/setup?code=…` (and `svc login`
// asks the running API for a fresh one, POST /setup-codes), and opening it once (within ten minutes)
// stores the operator token in that browser. The code is not the
// token: a link seen later (shell history, a screenshot) signs nobody in.
import { randomBytes, timingSafeEqual } from 'node:crypto';

export const SETUP_CODE_TTL_MS = 10 * 60_000;

/** The API process's armed setup code, if any: at most one, spent on first use or after ten minutes. */
export class SetupCodes {
  #armed: { code: string; expiresAt: number } | null = null;
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Arms a fresh code (replacing any earlier one) and answers it with when it expires. */
  arm(): { code: string; expiresAt: number } {
    this.#armed = { code: randomBytes(18).toString('base64url'), expiresAt: this.#now() + SETUP_CODE_TTL_MS };
    return { ...this.#armed };
  }

  /** Whether a code is armed and unexpired (else GET /setup answers 404). */
  get armed(): boolean {
    return this.#armed !== null && this.#armed.expiresAt > this.#now();
  }

  /** Spends the code: true once for the armed one within its ten minutes, false otherwise. */
  redeem(code: string): boolean {
    const armed = this.#armed;
    if (!armed || armed.expiresAt <= this.#now()) return false;
    const given = Buffer.from(code);
    const expected = Buffer.from(armed.code);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return false;
    this.#armed = null;
    return true;
  }
}
