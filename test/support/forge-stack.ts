// A test stack whose GitHub is local: bare repositories (GitHubStandIn) and a pull-request REST
// stand-in, with the calls the project tests make: register a repository, dispatch the shell agent.
import { GitHubStandIn } from './github-stand-in.ts';
import { PullRequestsStandIn } from './pull-requests-stand-in.ts';
import { startTestStack, type TestStack } from './stack.ts';

export function forgeStack(env: Record<string, string> = {}) {
  const github = new GitHubStandIn();
  const forge = new PullRequestsStandIn();
  let stack: TestStack | undefined;
  const svc = () => {
    if (!stack) throw new Error('the forge stack has not started');
    return stack;
  };
  return {
    github,
    forge,
    /** The running stack (after `start`). */
    get svc(): TestStack {
      return svc();
    },
    async start(): Promise<TestStack> {
      await forge.start();
      stack = await startTestStack({
        env: { SVC_GIT_TOKEN: 'ghp_test', SVC_GITHUB_API_URL: forge.url, SVC_FINALIZE_TIMEOUT_MS: '60000', ...env },
      });
      return stack;
    },
    async stop(): Promise<void> {
      await stack?.stop();
      await forge.stop();
    },
    /**
     * A Node-like repository acme/<name> with `.svc/environment.yaml`: its setup's node_modules is
     * ignored by git, as a real one's is.
     */
    environmentRepo(name: string, environment: string): string {
      return github.createRepo('acme', name, {
        files: {
          '.gitignore': 'node_modules/\n',
          'package-lock.json': '{"lockfileVersion": 3}\n',
          '.svc/environment.yaml': environment,
        },
      });
    },
    /** Registers acme/<name> (made with `github.createRepo`): the project's id. */
    async register(name: string): Promise<string> {
      const answer = await svc().request('POST', '/projects', { body: { gitUrl: `https://github.com/acme/${name}` } });
      if (answer.status !== 201) throw new Error(`register acme/${name}: ${answer.status} ${answer.text}`);
      return answer.body.project.id as string;
    },
    /** Dispatches the shell agent on a project: the run's id. */
    async dispatch(project: string, prompt: string, extra: Record<string, unknown> = {}): Promise<string> {
      const answer = await svc().request('POST', '/runs', { body: { agent: 'shell', project, prompt, ...extra } });
      if (answer.status !== 201) throw new Error(`dispatch: ${answer.status} ${answer.text}`);
      return answer.body.run.id as string;
    },
  };
}
