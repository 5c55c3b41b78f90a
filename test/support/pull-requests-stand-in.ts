// The pull-request part of GitHub's REST API, stood in: list (by head), create, get, and what the
// PR loop reads and does (check runs of the head commit, reviews and their comments, changed files,
// issue comments, collaborator permissions, merge). A `git` link (the GitHub stand-in's repositories) gives heads and
// merges;
// tests merge or close a PR, post reviews and set check runs to watch svc follow.
import { GitHubApiStandIn } from './github-api-stand-in.ts';

export interface StoredPull {
  number: number;
  owner: string;
  name: string;
  head: string;
  base: string;
  title: string;
  body: string;
  state: 'open' | 'closed';
  merged_at: string | null;
  reviews: {
    id: number;
    state: string;
    body: string;
    /** type: 'Bot' for an App's account, else a person's. */
    user: { login: string; type?: 'User' | 'Bot' };
    comments: { path: string; body: string }[];
  }[];
  comments: { id: number; body: string; user: { login: string; type?: 'User' | 'Bot' } }[];
  merge_method?: string;
}

export interface CheckRun {
  name: string;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion: 'success' | 'failure' | null;
  output: { title: string; summary: string; text: string };
  /** The App that made it (GitHub Actions unless told). */
  app?: { slug: string };
}

/** The forge's git side, for heads, changed files and merges (test/support/github-stand-in.ts). */
export interface ForgeGit {
  headSha(owner: string, name: string, branch: string): string;
  changedFiles(owner: string, name: string, base: string, head: string): string[];
  merge(owner: string, name: string, branch: string, into: string): void;
  /** Whether head merges into base without conflicts. */
  mergeable(owner: string, name: string, base: string, head: string): boolean;
}

export class PullRequestsStandIn extends GitHubApiStandIn {
  readonly pulls: StoredPull[] = [];
  /** Check runs by commit sha (GET /repos/{o}/{r}/commits/{sha}/check-runs). */
  readonly checkRuns = new Map<string, CheckRun[]>();
  git: ForgeGit | undefined;
  /** Logins with write access (GET /repos/{o}/{r}/collaborators/{user}/permission); others read. */
  readonly writers = new Set(['reviewer', 'maintainer']);
  #ids = 1000;

  constructor(token = 'ghp_test') {
    super();
    this.on((request, url) => {
      if (request.headers.authorization !== `token ${token}` && request.path.startsWith('/repos/'))
        return { status: 401, body: { message: 'Bad credentials' } };
      return this.#pulls(request, url) ?? this.#loop(request);
    });
  }

  headSha(pull: StoredPull): string | null {
    return this.git?.headSha(pull.owner, pull.name, pull.head) ?? null;
  }

  close(number: number): void {
    this.pulls.find((candidate) => candidate.number === number)!.state = 'closed';
  }

  merge(number: number): void {
    const pull = this.pulls.find((candidate) => candidate.number === number)!;
    pull.state = 'closed';
    pull.merged_at = new Date().toISOString();
  }

  /** A reviewer's review (CHANGES_REQUESTED, APPROVED, COMMENTED) with its line comments. */
  review(number: number, state: string, body: string, comments: { path: string; body: string }[] = []): void {
    const pull = this.pulls.find((candidate) => candidate.number === number)!;
    pull.reviews.push({ id: (this.#ids += 1), state, body, user: { login: 'reviewer' }, comments });
  }

  /** A comment on the PR's conversation, by a user. */
  comment(number: number, login: string, body: string): void {
    const pull = this.pulls.find((candidate) => candidate.number === number)!;
    pull.comments.push({ id: (this.#ids += 1), body, user: { login } });
  }

  #present(pull: StoredPull) {
    return {
      number: pull.number,
      html_url: `https://github.com/${pull.owner}/${pull.name}/pull/${pull.number}`,
      state: pull.state,
      merged_at: pull.merged_at,
      mergeable:
        pull.state === 'open' ? (this.git?.mergeable(pull.owner, pull.name, pull.base, pull.head) ?? true) : null,
      head: { ref: pull.head, sha: this.headSha(pull) },
      base: { ref: pull.base },
      title: pull.title,
    };
  }

  #pulls(request: { method: string; path: string; body: unknown }, url: URL) {
    const match = /^\/repos\/([^/]+)\/([^/]+)\/pulls(?:\/(\d+))?$/.exec(request.path);
    if (!match) return undefined;
    const [, owner, name, number] = match as unknown as [string, string, string, string | undefined];
    const mine = this.pulls.filter((pull) => pull.owner === owner && pull.name === name);
    if (request.method === 'GET' && number) {
      const pull = mine.find((candidate) => candidate.number === Number(number));
      return pull ? { status: 200, body: this.#present(pull) } : { status: 404, body: { message: 'Not Found' } };
    }
    if (request.method === 'GET') {
      const head = url.searchParams.get('head')?.split(':')[1];
      return {
        status: 200,
        body: mine.filter((pull) => !head || pull.head === head).map((pull) => this.#present(pull)),
      };
    }
    if (request.method === 'POST') {
      const body = request.body as { head: string; base: string; title: string; body: string };
      if (mine.some((pull) => pull.head === body.head && pull.state === 'open'))
        return { status: 422, body: { message: 'A pull request already exists' } };
      const pull: StoredPull = {
        number: this.pulls.length + 1,
        owner,
        name,
        head: body.head,
        base: body.base,
        title: body.title,
        body: body.body,
        state: 'open',
        merged_at: null,
        reviews: [],
        comments: [],
      };
      this.pulls.push(pull);
      return { status: 201, body: this.#present(pull) };
    }
    return undefined;
  }

  /** Check runs, reviews, review comments, files, issue comments, merge. */
  #loop(request: { method: string; path: string; body: unknown }) {
    const permission = /^\/repos\/[^/]+\/[^/]+\/collaborators\/([^/]+)\/permission$/.exec(request.path);
    if (permission && request.method === 'GET') {
      const login = decodeURIComponent(permission[1]!);
      return { status: 200, body: { permission: this.writers.has(login) ? 'write' : 'read', user: { login } } };
    }
    const checks = /^\/repos\/[^/]+\/[^/]+\/commits\/([0-9a-f]+)\/check-runs$/.exec(request.path);
    if (checks && request.method === 'GET') {
      const runs = (this.checkRuns.get(checks[1]!) ?? []).map((run, index) => ({
        id: index + 1,
        ...run,
        app: run.app ?? { slug: 'github-actions' },
      }));
      return { status: 200, body: { total_count: runs.length, check_runs: runs } };
    }
    const match =
      /^\/repos\/([^/]+)\/([^/]+)\/(pulls|issues)\/(\d+)\/(reviews|files|merge|comments)(?:\/(\d+)\/comments)?$/.exec(
        request.path,
      );
    if (!match) return undefined;
    const [, owner, name, , number, what, reviewId] = match as unknown as string[];
    const pull = this.pulls.find(
      (candidate) => candidate.owner === owner && candidate.name === name && candidate.number === Number(number),
    );
    if (!pull) return { status: 404, body: { message: 'Not Found' } };
    if (what === 'reviews' && reviewId)
      return { status: 200, body: pull.reviews.find((review) => review.id === Number(reviewId))?.comments ?? [] };
    if (what === 'reviews') return { status: 200, body: pull.reviews.map(({ comments: _c, ...review }) => review) };
    if (what === 'files') {
      const files = this.git?.changedFiles(pull.owner, pull.name, pull.base, pull.head) ?? [];
      return { status: 200, body: files.map((filename) => ({ filename, status: 'modified' })) };
    }
    if (what === 'comments' && request.method === 'POST') {
      const comment = { id: (this.#ids += 1), body: (request.body as { body: string }).body, user: { login: 'svc' } };
      pull.comments.push(comment);
      return { status: 201, body: comment };
    }
    if (what === 'comments') return { status: 200, body: pull.comments };
    if (what === 'merge' && request.method === 'PUT') {
      if (pull.state !== 'open') return { status: 405, body: { message: 'Pull Request is not mergeable' } };
      const body = request.body as { merge_method?: string; sha?: string };
      if (body.sha && body.sha !== this.headSha(pull))
        return { status: 409, body: { message: 'Head branch was modified. Review and try the merge again.' } };
      this.git?.merge(pull.owner, pull.name, pull.head, pull.base);
      pull.merge_method = body.merge_method;
      this.merge(pull.number);
      return { status: 200, body: { merged: true, message: 'Pull Request successfully merged', sha: body.sha } };
    }
    return undefined;
  }
}
