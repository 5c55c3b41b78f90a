// GitHub's REST API, stood in by a small local HTTP server: the production code (octokit) talks
// to it through SVC_GITHUB_API_URL. It records every request so tests can check what was sent.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { closeServer, listenOnLoopback } from './loopback-server.ts';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}

type Handler = (
  request: RecordedRequest,
  url: URL,
) => { status: number; body: unknown; headers?: Record<string, string> } | undefined;

export class GitHubApiStandIn {
  readonly requests: RecordedRequest[] = [];
  readonly #handlers: Handler[] = [];
  #server: Server | undefined;
  url = '';

  on(handler: Handler): this {
    this.#handlers.push(handler);
    return this;
  }

  async start(): Promise<string> {
    this.#server = createServer(async (req, res) => {
      let raw = '';
      for await (const chunk of req) raw += chunk;
      const url = new URL(req.url!, 'http://stand-in');
      const recorded: RecordedRequest = {
        method: req.method!,
        path: url.pathname,
        headers: req.headers,
        body: raw ? JSON.parse(raw) : undefined,
      };
      this.requests.push(recorded);
      const answer = this.#handlers.map((handler) => handler(recorded, url)).find(Boolean) ?? {
        status: 404,
        body: { message: 'Not Found' },
      };
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
      res.end(JSON.stringify(answer.body));
    });
    this.url = await listenOnLoopback(this.#server);
    return this.url;
  }

  async stop(): Promise<void> {
    await closeServer(this.#server);
  }
}

export function githubRepo(owner: string, name: string, options: { private?: boolean; defaultBranch?: string } = {}) {
  return {
    name,
    full_name: `${owner}/${name}`,
    owner: { login: owner },
    private: options.private ?? false,
    clone_url: `https://github.com/${owner}/${name}.git`,
    default_branch: options.defaultBranch ?? 'main',
  };
}
