// The operator's GitHub App registration window. The /github-app/* pages are anonymous (GitHub's
// redirects carry no svc token), so the operator opens them: an operator-authenticated call arms a
// one-time link; opening it binds that browser (a random secret in an HttpOnly cookie), and only a
// bound browser gets a registration `state`, stores an App or activates an installation.
// Kept in the data directory, beside the App it guards: every process sharing that directory (all
// the API's replicas; the stored App needs it shared anyway) sees the same window. One file per
// secret, named by the secret's hash (no lookup compares the secret itself); a secret is spent by
// renaming its file away, which one caller alone can do, so two replicas cannot both spend it.
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dataPaths } from './config.ts';

/** The armed link: opened once, within ten minutes. */
export const ARM_TTL_MS = 10 * 60_000;
/** A bound browser: an hour to create the App on GitHub and install it. */
export const BROWSER_TTL_MS = 60 * 60_000;
/** A registration form's state: used once, within ten minutes. */
export const STATE_TTL_MS = 10 * 60_000;

type Kind = 'arm' | 'browser' | 'state';
interface Entry {
  expiresAt: number;
  /** A state's browser (by hash): a state works only in the browser it was issued to. */
  browser?: string;
}

const hashOf = (value: string) => createHash('sha256').update(value).digest('hex');
const secret = () => randomBytes(24).toString('base64url');
const SECRET_SHAPE = /^[A-Za-z0-9_-]{16,64}$/;

export class GitHubAppRegistrationWindow {
  readonly #dir: string;
  readonly #now: () => number;

  constructor(dataDir: string, now: () => number = Date.now) {
    this.#dir = dataPaths.githubAppRegistration(dataDir);
    this.#now = now;
  }

  /** Arms a fresh one-time link (an earlier unspent one stops working) and answers its code. */
  arm(): { code: string; expiresAt: number } {
    this.#prune((kind) => kind === 'arm');
    const code = secret();
    const expiresAt = this.#now() + ARM_TTL_MS;
    this.#write('arm', code, { expiresAt });
    return { code, expiresAt };
  }

  /** Spends an armed link's code: the secret of a newly bound browser, or null (unknown, spent, expired). */
  redeemArm(code: string): { browser: string; expiresAt: number } | null {
    if (!this.#take('arm', code)) return null;
    const browser = secret();
    const expiresAt = this.#now() + BROWSER_TTL_MS;
    this.#write('browser', browser, { expiresAt });
    return { browser, expiresAt };
  }

  /** Whether `browser` (a cookie's value) is a bound browser, within its hour. */
  isBound(browser: string | undefined): browser is string {
    if (!browser || !SECRET_SHAPE.test(browser)) return false;
    const entry = this.#read(this.#path('browser', browser));
    return entry !== null && entry.expiresAt > this.#now();
  }

  /** A one-time state for a registration form in the bound `browser`. */
  issueState(browser: string): string {
    this.#prune(() => false);
    const state = secret();
    this.#write('state', state, { expiresAt: this.#now() + STATE_TTL_MS, browser: hashOf(browser) });
    return state;
  }

  /** Spends `state`: true once, within its ten minutes, and only in the browser it was issued to. */
  redeemState(state: string, browser: string): boolean {
    const entry = this.#take('state', state);
    return entry !== null && entry.browser === hashOf(browser);
  }

  /** Ends a browser's binding (its App is active): the cookie then opens nothing. */
  release(browser: string): void {
    if (SECRET_SHAPE.test(browser)) rmSync(this.#path('browser', browser), { force: true });
  }

  #path(kind: Kind, value: string): string {
    return join(this.#dir, `${kind}-${hashOf(value)}`);
  }

  #write(kind: Kind, value: string, entry: Entry): void {
    mkdirSync(this.#dir, { recursive: true, mode: 0o700 });
    const path = this.#path(kind, value);
    const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    writeFileSync(temporary, JSON.stringify(entry), { mode: 0o600, flag: 'wx' });
    renameSync(temporary, path);
  }

  /** Takes the entry away (rename: one caller wins) and answers it if it has not expired. */
  #take(kind: Kind, value: string): Entry | null {
    if (!SECRET_SHAPE.test(value)) return null;
    const taken = `${this.#path(kind, value)}.${randomBytes(6).toString('hex')}.spent`;
    try {
      renameSync(this.#path(kind, value), taken);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    const entry = this.#read(taken);
    rmSync(taken, { force: true });
    return entry && entry.expiresAt > this.#now() ? entry : null;
  }

  #read(path: string): Entry | null {
    try {
      const entry = JSON.parse(readFileSync(path, 'utf8')) as Entry;
      return typeof entry.expiresAt === 'number' ? entry : null;
    } catch {
      return null;
    }
  }

  /** Removes expired entries, leftovers, and the entries `drop` names by kind. */
  #prune(drop: (kind: Kind) => boolean): void {
    let names: string[];
    try {
      names = readdirSync(this.#dir);
    } catch {
      return;
    }
    const now = this.#now();
    for (const name of names) {
      const path = join(this.#dir, name);
      const kind = /^(arm|browser|state)-[0-9a-f]{64}$/.exec(name)?.[1] as Kind | undefined;
      const stale = !kind || drop(kind) || (this.#read(path)?.expiresAt ?? 0) <= now;
      // A file another process is writing or spending right now is left alone.
      if (stale && !/\.(tmp|spent)$/.test(name)) rmSync(path, { force: true });
    }
  }
}
