// The operator's GitHub App registration window. The /github-app/* pages are anonymous (GitHub's
// redirects carry no svc token), so the operator opens them: an operator-authenticated call arms a
// one-time link; opening it binds that browser (a random secret in an HttpOnly cookie), and only a
// bound browser gets a registration `state`, stores an App or activates an installation.
// Kept in the database (one_time_secrets), by hash: a link armed on one API replica opens on
// another, GitHub's callback may reach any of them, and of two replicas spending one secret at
// once only one succeeds (a conditional DELETE). No lookup compares a secret itself.
import { createHash, randomBytes } from 'node:crypto';
import type { OneTimeSecretsRepository } from '../../db/repositories/one-time-secrets.repository.ts';

/** The armed link: opened once, within ten minutes. */
export const ARM_TTL_MS = 10 * 60_000;
/** A bound browser: an hour to create the App on GitHub and install it. */
export const BROWSER_TTL_MS = 60 * 60_000;
/** A registration form's state: used once, within ten minutes. */
export const STATE_TTL_MS = 10 * 60_000;

/** One armed link at a time: a new one replaces an unopened one. */
const ARM_SLOT = 'github-app-arm';
const browserSlot = (hash: string) => `github-app-browser:${hash}`;
const stateSlot = (hash: string) => `github-app-state:${hash}`;

const hashOf = (value: string) => createHash('sha256').update(value).digest('hex');
const secret = () => randomBytes(24).toString('base64url');
const SECRET_SHAPE = /^[A-Za-z0-9_-]{16,64}$/;

export class GitHubAppRegistrationWindow {
  readonly #secrets: OneTimeSecretsRepository;
  readonly #now: () => number;

  constructor(secrets: OneTimeSecretsRepository, now: () => number = Date.now) {
    this.#secrets = secrets;
    this.#now = now;
  }

  /** Arms a fresh one-time link (an earlier unspent one stops working) and answers its code. */
  async arm(): Promise<{ code: string; expiresAt: number }> {
    await this.#secrets.prune(this.#now());
    const code = secret();
    const expiresAt = this.#now() + ARM_TTL_MS;
    await this.#secrets.put({ slot: ARM_SLOT, secretHash: hashOf(code), expiresAt });
    return { code, expiresAt };
  }

  /** Spends an armed link's code: the secret of a newly bound browser, or null (unknown, spent, expired). */
  async redeemArm(code: string): Promise<{ browser: string; expiresAt: number } | null> {
    if (!SECRET_SHAPE.test(code) || !(await this.#secrets.take(ARM_SLOT, hashOf(code), this.#now()))) return null;
    const browser = secret();
    const expiresAt = this.#now() + BROWSER_TTL_MS;
    const hash = hashOf(browser);
    await this.#secrets.put({ slot: browserSlot(hash), secretHash: hash, expiresAt });
    return { browser, expiresAt };
  }

  /** Whether `browser` (a cookie's value) is a bound browser, within its hour. */
  async isBound(browser: string | undefined): Promise<boolean> {
    if (!browser || !SECRET_SHAPE.test(browser)) return false;
    return this.#secrets.holds(browserSlot(hashOf(browser)), this.#now());
  }

  /** A one-time state for a registration form in the bound `browser`. */
  async issueState(browser: string): Promise<string> {
    await this.#secrets.prune(this.#now());
    const state = secret();
    const hash = hashOf(state);
    const expiresAt = this.#now() + STATE_TTL_MS;
    await this.#secrets.put({ slot: stateSlot(hash), secretHash: hash, boundTo: hashOf(browser), expiresAt });
    return state;
  }

  /**
   * Spends `state`: true once, within its ten minutes, and only in the browser it was issued to. A
   * state presented by another browser is spent all the same: whoever saw it in flight burns it.
   */
  async redeemState(state: string, browser: string): Promise<boolean> {
    if (!SECRET_SHAPE.test(state)) return false;
    const hash = hashOf(state);
    if (await this.#secrets.take(stateSlot(hash), hash, this.#now(), hashOf(browser))) return true;
    await this.#secrets.drop(stateSlot(hash));
    return false;
  }

  /** Ends a browser's binding (its App is active): the cookie then opens nothing. */
  async release(browser: string): Promise<void> {
    if (SECRET_SHAPE.test(browser)) await this.#secrets.drop(browserSlot(hashOf(browser)));
  }
}
