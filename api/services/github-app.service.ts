// Registering svc as a GitHub App through GitHub's manifest flow: /github-app/register renders a
// form that posts svc's manifest to GitHub with a one-time `state`; GitHub sends the browser back
// to /github-app/callback with a code that svc converts into the App's credentials (the real
// conversion endpoint); installing the App sends it to /github-app/installed with the installation.
// The pages are anonymous (a browser on GitHub's redirects carries no svc token), so they serve
// only a browser the operator bound (./github-app-registration.ts): anyone else gets no
// state, stores no App and activates no installation. A stored App is replaced only by the
// operator removing it (DELETE /github-app), and an installation is taken only after GitHub
// confirms, with the App's own key, that it is the App's.
import { randomBytes } from 'node:crypto';
import { describeForgeIdentity, type ForgeIdentity } from '../../core/forge-identity.ts';
import type { GitHubAppSettings } from '../../platform/config.ts';
import { githubApi, RUN_PERMISSIONS, type ForgeCredentials } from '../../platform/forge-credentials.ts';
import {
  isPemPrivateKey,
  readStoredGitHubApp,
  removeStoredGitHubApp,
  storeGitHubApp,
  storeGitHubAppInstallation,
  type StoredGitHubApp,
} from '../../platform/github-app.ts';
import type { GitHubAppRegistrationWindow } from './github-app-registration.ts';

const ORG_LOGIN = /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/;
/** GitHub App names: at most 34 characters. */
const APP_NAME = /^[A-Za-z0-9][A-Za-z0-9 ._-]{0,33}$/;

/** GitHub's web host for an API base URL: github.com, or a GitHub Enterprise Server's own host. */
export function githubWebUrl(apiUrl: string): string {
  if (/\/api\/v3$/.test(apiUrl)) return apiUrl.replace(/\/api\/v3$/, '');
  return 'https://github.com';
}

export type Registration =
  | { kind: 'form'; action: string; manifest: Record<string, unknown>; name: string; org: string | null }
  | { kind: 'invalid'; message: string }
  | { kind: 'already_stored' }
  | { kind: 'no_public_url' };

export type Installation =
  | { kind: 'instructions'; installationId: string | null; reason: 'no_id' | 'no_app' | 'env' | 'not_this_app' }
  | { kind: 'activated'; installationId: string; account: string };

/** GitHub refused or failed the manifest conversion (an unknown or used code, an outage). */
export class ConversionFailedError extends Error {}
/** The App's private key cannot sign (unreadable file, not a PEM). */
export class AppKeyError extends Error {}
/** GitHub did not answer the installation check. */
export class GitHubUnreachableError extends Error {}
/** The App svc acts as is configured in the environment: only the operator's settings change it. */
export class GitHubAppFromEnvironmentError extends Error {}

export interface GitHubAppServiceDeps {
  settings: GitHubAppSettings;
  credentials: ForgeCredentials;
  dataDir: string;
  /** SVC_PUBLIC_URL: where GitHub sends the browser back; else the origin the page was asked on. */
  publicUrl: string | null;
  publicMode: boolean;
  /** The operator's registration window, shared by every API replica. */
  window: GitHubAppRegistrationWindow;
}

/** The GitHub App registration: the gate, the manifest, the conversion, the installation. */
export class GitHubAppService {
  readonly #deps: GitHubAppServiceDeps;
  readonly #window: GitHubAppRegistrationWindow;

  constructor(deps: GitHubAppServiceDeps) {
    this.#deps = deps;
    this.#window = deps.window;
  }

  /** SVC_GITHUB_APP_REGISTRATION; unset: on, but off in public mode and once an App is in use. */
  get enabled(): boolean {
    const { registration } = this.#deps.settings;
    if (registration) return registration === 'on';
    return !this.#deps.publicMode && this.#deps.credentials.activeApp() === null;
  }

  /** Where the register form posts: GitHub's web host for the configured API. */
  get githubWebUrl(): string {
    return githubWebUrl(this.#deps.credentials.apiUrl);
  }

  /** SVC_PUBLIC_URL, when set: where the operator's links point. */
  get publicUrl(): string | null {
    return this.#deps.publicUrl;
  }

  get storesCredentials(): boolean {
    return this.#deps.settings.credentialStore === 'data-dir';
  }

  /** Which GitHub identity svc uses now, and whether the registration pages are open. */
  identity(): ForgeIdentity & {
    description: string;
    registration: { enabled: boolean; credentialStore: 'page' | 'data-dir' };
  } {
    const identity = this.#deps.credentials.identity();
    return {
      ...identity,
      description: describeForgeIdentity(identity),
      registration: { enabled: this.enabled, credentialStore: this.#deps.settings.credentialStore },
    };
  }

  /** Arms the operator's one-time registration link (the caller is the operator). */
  arm(): Promise<{ code: string; expiresAt: number }> {
    return this.#window.arm();
  }

  /** Spends an armed link's code: the new binding of the browser that opened it, or null. */
  bind(code: string): Promise<{ browser: string; expiresAt: number } | null> {
    return this.#window.redeemArm(code);
  }

  /** Whether a cookie's value is a browser the operator bound (and within its hour). */
  isBound(browser: string | undefined): Promise<boolean> {
    return this.#window.isBound(browser);
  }

  /** Ends a browser's binding once its App acts. */
  release(browser: string): Promise<void> {
    return this.#window.release(browser);
  }

  /**
   * The manifest form for a new App named `name` (default svc-forge-<6 chars>), owned by `org` or
   * the user, with a state that works once and only in the bound `browser`.
   */
  async register(
    input: { name?: string | undefined; org?: string | undefined },
    browser: string,
  ): Promise<Registration> {
    if (input.org !== undefined && !ORG_LOGIN.test(input.org))
      return { kind: 'invalid', message: 'org must be a GitHub organization login (letters, digits, single hyphens)' };
    const name = input.name ?? `svc-forge-${randomBytes(3).toString('hex')}`;
    if (!APP_NAME.test(name))
      return { kind: 'invalid', message: 'name must be 1-34 letters, digits, spaces, ".", "_" or "-"' };
    if (this.alreadyStored) return { kind: 'already_stored' };
    // GitHub sends the browser back to these URLs: a Host header is no address to trust for them.
    const base = this.#deps.publicUrl;
    if (base === null) return { kind: 'no_public_url' };
    const manifest = {
      name,
      url: base,
      // svc follows its PRs by polling: no webhook to deliver to.
      hook_attributes: { url: `${base}/github-app/webhook`, active: false },
      redirect_url: `${base}/github-app/callback`,
      setup_url: `${base}/github-app/installed`,
      setup_on_update: true,
      public: false,
      default_permissions: RUN_PERMISSIONS,
      default_events: [],
    };
    const state = await this.#window.issueState(browser);
    const web = this.githubWebUrl;
    const owner = input.org ? `/organizations/${input.org}` : '';
    return {
      kind: 'form',
      action: `${web}${owner}/settings/apps/new?state=${encodeURIComponent(state)}`,
      manifest,
      name,
      org: input.org ?? null,
    };
  }

  /** Spends a registration's state: false when unknown, spent, expired or issued to another browser. */
  redeemState(state: string, browser: string): Promise<boolean> {
    return this.#window.redeemState(state, browser);
  }

  /** With SVC_APP_CRED_STORE=data-dir, an App already stored (a later registration must not replace it). */
  get alreadyStored(): boolean {
    return this.storesCredentials && this.stored !== null;
  }

  /** The App stored in the data directory, if any. */
  get stored(): StoredGitHubApp | null {
    return readStoredGitHubApp(this.#deps.dataDir);
  }

  /**
   * Removes the stored App (the operator's call): svc goes back to the PAT (or anonymous) until an
   * App is registered again. Null when none was stored; an App from the environment is refused.
   */
  remove(): { appId: string | null; slug: string | null } | null {
    if (this.#deps.credentials.registeredApp()?.source === 'env')
      throw new GitHubAppFromEnvironmentError('svc takes its App from SVC_GITHUB_APP_ID');
    return removeStoredGitHubApp(this.#deps.dataDir);
  }

  /** The App's credentials for a manifest code, from GitHub's conversion endpoint (a code works once, for an hour). */
  async convert(code: string): Promise<StoredGitHubApp> {
    let data: Record<string, unknown>;
    try {
      ({ data } = await (await githubApi(this.#deps.credentials.apiUrl)).rest.apps.createFromManifest({ code }));
    } catch (error) {
      const status = (error as { status?: number }).status;
      throw new ConversionFailedError(`GitHub refused the conversion${status ? ` (HTTP ${status})` : ''}`);
    }
    const text = (key: string) => (typeof data[key] === 'string' && data[key] !== '' ? (data[key] as string) : null);
    const id = data.id;
    const [slug, pem, clientId, clientSecret, htmlUrl] = ['slug', 'pem', 'client_id', 'client_secret', 'html_url'].map(
      text,
    );
    if (typeof id !== 'number' || !slug || !pem || !clientId || !clientSecret || !htmlUrl)
      throw new ConversionFailedError('GitHub answered the conversion without the App credentials');
    // The key itself: anything else (a path, say) is refused, never read.
    if (!isPemPrivateKey(pem))
      throw new ConversionFailedError('GitHub answered the conversion with a pem that is not a PEM private key');
    return {
      appId: String(id),
      slug,
      privateKey: pem,
      webhookSecret: text('webhook_secret'),
      clientId,
      clientSecret,
      htmlUrl,
      installationId: null,
      createdAt: new Date().toISOString(),
    };
  }

  /** Keeps the App in the data directory (0600); throws GitHubAppAlreadyStoredError when one is there. */
  store(app: StoredGitHubApp): void {
    storeGitHubApp(this.#deps.dataDir, app);
  }

  /**
   * GitHub's setup redirect after an installation. A stored App takes the installation once
   * GitHub, asked with the App's JWT, confirms it is one of the App's: from then on svc mints
   * installation tokens (in every process sharing the data directory). Otherwise: instructions.
   */
  async install(installationId: string | undefined): Promise<Installation> {
    const id = installationId && /^\d{1,20}$/.test(installationId) ? installationId : null;
    if (!id) return { kind: 'instructions', installationId: null, reason: 'no_id' };
    const app = this.#deps.credentials.registeredApp();
    if (!app) return { kind: 'instructions', installationId: id, reason: 'no_app' };
    if (app.source === 'env') return { kind: 'instructions', installationId: id, reason: 'env' };
    let account: string | null;
    try {
      account = await this.#deps.credentials.installationAccount(app, id);
    } catch (error) {
      // octokit's errors carry an HTTP status (500 for a network failure); a key that cannot sign does not.
      if (typeof (error as { status?: number }).status === 'number')
        throw new GitHubUnreachableError((error as Error).message);
      throw new AppKeyError((error as Error).message);
    }
    if (!account) return { kind: 'instructions', installationId: id, reason: 'not_this_app' };
    storeGitHubAppInstallation(this.#deps.dataDir, id);
    return { kind: 'activated', installationId: id, account };
  }
}
