// GitHub through octokit, with a configurable base URL (GitHub Enterprise, or a local stand-in in
// tests), authenticated with a token (PAT). Without a token the forge is "unsupported".
import type { Octokit } from '@octokit/rest';
import { readPullRequestStatus } from './pull-request-status.ts';
import { toRef, type PullLike, type PullRequestRef, type PullRequestStatus } from './pull-request-ref.ts';

export { toRef, type PullLike, type PullRequestRef, type PullRequestStatus };

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

/**
 * An octokit with `token`, loaded on first use and kept: octokit is ~1 MiB an API that never calls
 * GitHub need not hold (docs/decisions/0037-process-costs.md).
 */
function lazyOctokit(settings: ForgeSettings & { token: string }): () => Promise<Octokit> {
  let loaded: Promise<Octokit> | undefined;
  const load = async () => {
    const { Octokit } = await import('@octokit/rest');
    return new Octokit({
      auth: settings.token,
      baseUrl: settings.apiUrl,
      userAgent: 'svc',
      log: QUIET,
      request: { retries: 0 },
    });
  };
  return () => (loaded ??= load());
}

export class GitHubForge {
  readonly #octokit: (() => Promise<Octokit>) | undefined;

  constructor(settings: ForgeSettings) {
    this.#octokit = settings.token ? lazyOctokit({ ...settings, token: settings.token }) : undefined;
  }

  get supported(): boolean {
    return this.#octokit !== undefined;
  }

  /** Every repository the token can see, across pages. */
  async listRepos(): Promise<ForgeRepo[]> {
    if (!this.#octokit) return [];
    const octokit = await this.#octokit();
    const repos = await octokit.paginate(octokit.rest.repos.listForAuthenticatedUser, {
      per_page: 100,
      sort: 'full_name',
    });
    return repos.map((repo) => ({
      owner: repo.owner.login,
      name: repo.name,
      cloneUrl: repo.clone_url,
      defaultBranch: repo.default_branch,
      private: repo.private,
    }));
  }
}

export function parsePullRequestUrl(url: string): { owner: string; name: string; number: number } | undefined {
  const match = /\/([^/]+)\/([^/]+)\/pull\/(\d+)$/.exec(url);
  return match ? { owner: match[1]!, name: match[2]!, number: Number(match[3]) } : undefined;
}

export class ForgeUnavailableError extends Error {}

export class PullRequests {
  readonly #octokit: () => Promise<Octokit>;

  constructor(settings: ForgeSettings) {
    if (!settings.token)
      throw new ForgeUnavailableError(
        "no forge credentials for this repository: set SVC_GIT_TOKEN or GITHUB_TOKEN, or install svc's GitHub App on " +
          'it',
      );
    this.#octokit = lazyOctokit({ ...settings, token: settings.token });
  }

  /** Opens the PR for head→base, or answers the one that already exists: never two for one branch. */
  async open(input: {
    owner: string;
    name: string;
    head: string;
    base: string;
    title: string;
    body: string;
  }): Promise<PullRequestRef> {
    const octokit = await this.#octokit();
    const existing = async () => {
      const { data } = await octokit.rest.pulls.list({
        owner: input.owner,
        repo: input.name,
        head: `${input.owner}:${input.head}`,
        state: 'all',
        per_page: 1,
      });
      return data[0] ? toRef(data[0] as PullLike) : undefined;
    };
    const found = await existing();
    if (found) return found;
    try {
      const { data } = await octokit.rest.pulls.create({
        owner: input.owner,
        repo: input.name,
        head: input.head,
        base: input.base,
        title: input.title,
        body: input.body,
      });
      return toRef(data as PullLike);
    } catch (error) {
      // A concurrent attempt won the race: answer its PR.
      if ((error as { status?: number }).status === 422) {
        const raced = await existing();
        if (raced) return raced;
      }
      throw error;
    }
  }

  async get(url: string): Promise<PullRequestRef> {
    const ref = parsePullRequestUrl(url);
    if (!ref) throw new Error(`not a pull request URL: ${url}`);
    const octokit = await this.#octokit();
    const { data } = await octokit.rest.pulls.get({ owner: ref.owner, repo: ref.name, pull_number: ref.number });
    return toRef(data as PullLike);
  }

  /** What the PR loop looks at (core/pr-loop.ts); see pull-request-status.ts. */
  async status(
    url: string,
    logTailLines: number,
    handledComments: number[] = [],
    ciApps?: readonly string[],
  ): Promise<PullRequestStatus> {
    const ref = parsePullRequestUrl(url);
    if (!ref) throw new Error(`not a pull request URL: ${url}`);
    return readPullRequestStatus(await this.#octokit(), ref, logTailLines, handledComments, ciApps);
  }

  /** Merges the PR at this head (a head that moved since is refused by the forge: 409). */
  async merge(url: string, method: 'squash' | 'merge' | 'rebase', sha: string): Promise<void> {
    const ref = parsePullRequestUrl(url);
    if (!ref) throw new Error(`not a pull request URL: ${url}`);
    const octokit = await this.#octokit();
    await octokit.rest.pulls.merge({
      owner: ref.owner,
      repo: ref.name,
      pull_number: ref.number,
      merge_method: method,
      sha,
    });
  }

  /** A comment on the PR's conversation. */
  async comment(url: string, body: string): Promise<void> {
    const ref = parsePullRequestUrl(url);
    if (!ref) throw new Error(`not a pull request URL: ${url}`);
    const octokit = await this.#octokit();
    await octokit.rest.issues.createComment({ owner: ref.owner, repo: ref.name, issue_number: ref.number, body });
  }
}
