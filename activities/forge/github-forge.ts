// GitHub through octokit, with a configurable base URL (GitHub Enterprise, or a local stand-in in
// tests), authenticated with a token (PAT). Without a token the forge is "unsupported".
import { Octokit } from '@octokit/rest';

export interface ForgeRepo {
  owner: string;
  name: string;
  cloneUrl: string;
  defaultBranch: string;
  private: boolean;
}

export interface ForgeSettings {
  apiUrl: string;
  token: string | undefined;
}

// Failures reach callers as errors; octokit's own request log would only repeat them.
const QUIET = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

export class GitHubForge {
  readonly #octokit: Octokit | undefined;

  constructor(settings: ForgeSettings) {
    this.#octokit = settings.token ? new Octokit({ auth: settings.token, baseUrl: settings.apiUrl, userAgent: 'svc', log: QUIET, request: { retries: 0 } }) : undefined;
  }

  get supported(): boolean {
    return this.#octokit !== undefined;
  }

  /** Every repository the token can see, across pages. */
  async listRepos(): Promise<ForgeRepo[]> {
    if (!this.#octokit) return [];
    const repos = await this.#octokit.paginate(this.#octokit.rest.repos.listForAuthenticatedUser, { per_page: 100, sort: 'full_name' });
    return repos.map((repo) => ({ owner: repo.owner.login, name: repo.name, cloneUrl: repo.clone_url, defaultBranch: repo.default_branch, private: repo.private }));
  }
}
