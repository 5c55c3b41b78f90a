// svc's forge credentials, asked for per repository: the operator's PAT, or (once a GitHub App is
// configured and installed) a fresh installation token restricted to that one repository and the
// permissions the work needs. Activities and the git-credential route ask here for each repository
// instead of holding a token, so no run ever handles a long-lived credential of svc's.
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import type { createAppAuth } from '@octokit/auth-app';
import type { Octokit } from '@octokit/rest';
import type { ForgeIdentity } from '../core/forge-identity.ts';
import { GITHUB_GIT_URL } from '../core/git-url.ts';
import { dataPaths, type GitHubAppSettings, type SvcConfig } from './config.ts';
import { loadPrivateKey, readStoredGitHubApp, type GitHubAppCredentials } from './github-app.ts';
import type { ForgeRemote } from './host-git.ts';

/** What svc itself does on a run's repository: clone and fetch, push the branch, open and follow its PR. */
export const RUN_PERMISSIONS: Record<string, string> = {
  contents: 'write',
  pull_requests: 'write',
  metadata: 'read',
};
/**
 * What a sandbox's git-credential carries: reading its own repository over HTTPS. Not write:
 * GitHub cannot limit a token to one branch, and a run may touch only its own (svc pushes it).
 */
export const SANDBOX_PERMISSIONS: Record<string, string> = { contents: 'read', metadata: 'read' };

/** No GitHub call svc makes for a token may hang an activity or a request. */
const REQUEST_TIMEOUT_MS = 30_000;

// Failures reach callers as errors; octokit's own request log would only repeat them.
const QUIET = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/**
 * An octokit for GitHub's REST API at `apiUrl`, unauthenticated unless told, each request bounded in
 * time. Loaded on first use: an API that never calls GitHub does not hold it (~1 MiB).
 */
export async function githubApi(apiUrl: string): Promise<Octokit> {
  const { Octokit } = await import('@octokit/rest');
  const timedFetch: typeof fetch = (input, init) =>
    fetch(input, { ...init, signal: init?.signal ?? AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  return new Octokit({ baseUrl: apiUrl, userAgent: 'svc', log: QUIET, request: { retries: 0, fetch: timedFetch } });
}

export interface ForgeCredentialSettings {
  apiUrl: string;
  /** Where svc's git reaches GitHub's repositories (SVC_GITHUB_GIT_URL); GITHUB_GIT_URL when unset. */
  gitUrl?: string;
  /** The operator's token (SVC_GIT_TOKEN / GITHUB_TOKEN), used while no App is installed. */
  pat: string | undefined;
  /** An App configured in the environment (it wins over one stored in the data directory). */
  app: GitHubAppSettings['app'];
  dataDir: string;
}

type AppAuth = ReturnType<typeof createAppAuth>;

const statusOf = (error: unknown) => (error as { status?: number }).status;

/**
 * Where svc's forge tokens come from. With an App registered and installed (environment, else
 * the data directory, re-read when it changes so an installation completed by another process
 * takes effect at once), every token is an installation token for one repository; otherwise
 * the PAT (or none: anonymous). The PAT and the App's key are never handed to a sandbox.
 */
export class ForgeCredentials {
  readonly apiUrl: string;
  readonly #settings: ForgeCredentialSettings;
  #github: Promise<Octokit> | undefined;
  #stored: { stamp: string; app: GitHubAppCredentials | null } | undefined;
  #auth: { key: string; auth: Promise<AppAuth>; accounts: Map<string, string> } | undefined;

  constructor(settings: ForgeCredentialSettings) {
    this.#settings = settings;
    this.apiUrl = settings.apiUrl;
  }

  #client(): Promise<Octokit> {
    this.#github ??= githubApi(this.#settings.apiUrl);
    return this.#github;
  }

  static fromConfig(
    config: Pick<SvcConfig, 'githubApiUrl' | 'githubGitUrl' | 'githubToken' | 'githubApp' | 'dataDir'>,
  ) {
    return new ForgeCredentials({
      apiUrl: config.githubApiUrl,
      gitUrl: config.githubGitUrl,
      pat: config.githubToken,
      app: config.githubApp.app,
      dataDir: config.dataDir,
    });
  }

  /** The App svc is registered as, installed or not yet; null when there is none. */
  registeredApp(): GitHubAppCredentials | null {
    const env = this.#settings.app;
    if (env)
      return {
        appId: env.appId,
        privateKey: env.privateKey,
        installationId: env.installationId ?? null,
        source: 'env',
      };
    // Re-read only when the file changed (it is replaced whole, so a new inode says so).
    const stats = statSync(dataPaths.githubApp(this.#settings.dataDir), { throwIfNoEntry: false });
    const stamp = stats ? `${stats.ino}:${stats.mtimeMs}:${stats.size}` : 'none';
    if (this.#stored?.stamp !== stamp) {
      const stored = stats ? readStoredGitHubApp(this.#settings.dataDir) : null;
      this.#stored = {
        stamp,
        app: stored && {
          appId: stored.appId,
          privateKey: stored.privateKey,
          installationId: stored.installationId,
          source: 'data-dir',
          slug: stored.slug,
        },
      };
    }
    return this.#stored.app;
  }

  /** The App svc acts as now: registered and installed. */
  activeApp(): (GitHubAppCredentials & { installationId: string }) | null {
    const app = this.registeredApp();
    return app?.installationId ? { ...app, installationId: app.installationId } : null;
  }

  get mode(): 'app' | 'pat' | 'anonymous' {
    if (this.activeApp()) return 'app';
    return this.#settings.pat ? 'pat' : 'anonymous';
  }

  /** Which GitHub identity svc uses now (the serve log, GET /github-app, `svc doctor`); never a secret. */
  identity(): ForgeIdentity {
    const app = this.registeredApp();
    return {
      mode: this.mode,
      app: app && {
        source: app.source,
        appId: app.appId,
        slug: app.slug ?? null,
        installationId: app.installationId,
      },
    };
  }

  /**
   * The token for svc's own work on owner/name (git and the PR API): a fresh installation token
   * for that repository alone with RUN_PERMISSIONS, or the PAT; undefined means anonymous (no
   * credential, or the App is not installed on that repository).
   */
  async tokenFor(owner: string, name: string): Promise<string | undefined> {
    const app = this.activeApp();
    if (!app) return this.#settings.pat;
    return (await this.#installationToken(app, owner, name, RUN_PERMISSIONS)) ?? undefined;
  }

  /** Where svc's git reaches owner/name, with tokenFor's token: what a git command that reaches the forge takes. */
  async gitRemote(owner: string, name: string): Promise<ForgeRemote> {
    return { url: this.#settings.gitUrl ?? GITHUB_GIT_URL, token: await this.tokenFor(owner, name) };
  }

  /**
   * The credential a run's sandbox may have for its own repository: an installation token for
   * owner/name with SANDBOX_PERMISSIONS, or null (no App installed there). Never the PAT.
   */
  async sandboxTokenFor(owner: string, name: string): Promise<string | null> {
    const app = this.activeApp();
    return app ? this.#installationToken(app, owner, name, SANDBOX_PERMISSIONS) : null;
  }

  /** The account `installationId` is installed on, asked with the App's JWT; null when it is not the App's. */
  async installationAccount(app: GitHubAppCredentials, installationId: string): Promise<string | null> {
    const entry = this.#authFor(app);
    const known = entry.accounts.get(installationId);
    if (known) return known;
    const { token: jwt } = await (await entry.auth)({ type: 'app' });
    try {
      const { data } = await (
        await this.#client()
      ).request('GET /app/installations/{installation_id}', {
        installation_id: Number(installationId),
        headers: { authorization: `bearer ${jwt}` },
      });
      const login = (data.account as { login?: string } | null)?.login ?? null;
      if (login) entry.accounts.set(installationId, login);
      return login;
    } catch (error) {
      if (statusOf(error) === 404) return null;
      throw error;
    }
  }

  async #installationToken(
    app: GitHubAppCredentials & { installationId: string },
    owner: string,
    name: string,
    permissions: Record<string, string>,
  ): Promise<string | null> {
    // GitHub names the repositories of a token request without their owner: a repository of
    // another account with the same name must never be what a run's token opens.
    const account = await this.installationAccount(app, app.installationId);
    if (account?.toLowerCase() !== owner.toLowerCase()) return null;
    try {
      const { token } = await (
        await this.#authFor(app).auth
      )({
        type: 'installation',
        installationId: app.installationId,
        repositoryNames: [name],
        permissions,
      });
      return token;
    } catch (error) {
      // 422: that repository is not part of the installation.
      if (statusOf(error) === 422 || statusOf(error) === 404) return null;
      throw error;
    }
  }

  #authFor(app: GitHubAppCredentials) {
    const key = `${app.appId}:${createHash('sha256').update(app.privateKey).digest('hex')}`;
    if (this.#auth?.key !== key) {
      // Only the operator's own setting may name a file; a stored key is the key itself.
      const privateKey = app.source === 'env' ? loadPrivateKey(app.privateKey) : app.privateKey;
      const auth = Promise.all([import('@octokit/auth-app'), this.#client()]).then(([{ createAppAuth }, github]) =>
        createAppAuth({ appId: app.appId, privateKey, request: github.request, log: QUIET }),
      );
      this.#auth = { key, auth, accounts: new Map() };
    }
    return this.#auth;
  }
}
