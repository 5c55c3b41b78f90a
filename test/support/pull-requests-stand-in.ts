// The pull-request part of GitHub's REST API, stood in: list (by head), create, get. Tests can
// merge or close a PR to watch svc follow it.
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
}

export class PullRequestsStandIn extends GitHubApiStandIn {
  readonly pulls: StoredPull[] = [];

  constructor(token = 'ghp_test') {
    super();
    this.on((request, url) => {
      const match = /^\/repos\/([^/]+)\/([^/]+)\/pulls(?:\/(\d+))?$/.exec(request.path);
      if (!match) return undefined;
      if (request.headers.authorization !== `token ${token}`)
        return { status: 401, body: { message: 'Bad credentials' } };
      const [, owner, name, number] = match as unknown as [string, string, string, string | undefined];
      const present = (pull: StoredPull) => ({
        number: pull.number,
        html_url: `https://github.com/${owner}/${name}/pull/${pull.number}`,
        state: pull.state,
        merged_at: pull.merged_at,
        head: { ref: pull.head },
        base: { ref: pull.base },
        title: pull.title,
      });
      const mine = this.pulls.filter((pull) => pull.owner === owner && pull.name === name);
      if (request.method === 'GET' && number) {
        const pull = mine.find((candidate) => candidate.number === Number(number));
        return pull ? { status: 200, body: present(pull) } : { status: 404, body: { message: 'Not Found' } };
      }
      if (request.method === 'GET') {
        const head = url.searchParams.get('head')?.split(':')[1];
        return { status: 200, body: mine.filter((pull) => !head || pull.head === head).map(present) };
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
        };
        this.pulls.push(pull);
        return { status: 201, body: present(pull) };
      }
      return undefined;
    });
  }

  close(number: number): void {
    this.pulls.find((candidate) => candidate.number === number)!.state = 'closed';
  }

  merge(number: number): void {
    const pull = this.pulls.find((candidate) => candidate.number === number)!;
    pull.state = 'closed';
    pull.merged_at = new Date().toISOString();
  }
}
