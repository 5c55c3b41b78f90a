// Projects whose preview is a small real HTTP server answering its workspace's `page.txt` (as an
// HTML heading for browser tests, or as text), registered in the GitHub stand-in, and a run of one
// taken to a live preview.
import type { ExecutionContext } from 'ava';
import { GitHubStandIn } from './github-stand-in.ts';
import { waitFor } from './processes.ts';
import { PullRequestsStandIn } from './pull-requests-stand-in.ts';
import { lastRunEvents, startTestStack, waitForRunState, type TestStack } from './stack.ts';

export const HTML_PREVIEW_SERVER = `
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
createServer((_request, response) => {
  response.setHeader('content-type', 'text/html');
  response.end('<h1>' + readFileSync('page.txt', 'utf8').trim() + '</h1>');
}).listen(Number(process.env.PORT), process.env.HOST);
`;

/** Creates `acme/<name>` with the server as its `.svc/preview.yaml` preview on port 3000. */
export function createHtmlPreviewRepo(name: string): string {
  new GitHubStandIn().createRepo('acme', name, {
    files: {
      '.svc/preview.yaml': 'preview:\n  type: server\n  command: node server.mjs\n  port: 3000\n',
      'server.mjs': HTML_PREVIEW_SERVER,
      'page.txt': 'before\n',
    },
  });
  return `https://github.com/acme/${name}`;
}

/** A plain-text preview server: `<label>: <page.txt>`. */
export const textPreviewServer = (label: string) => `
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
createServer((_request, response) => response.end('${label}: ' + readFileSync('page.txt', 'utf8').trim()))
  .listen(Number(process.env.PORT), process.env.HOST);
`;

/**
 * A stack with a pull-request stand-in (stopped with the test), `acme/<name>` whose preview is
 * `textPreviewServer(label)` on port 8080, and a run that writes `text` to its page, succeeds and
 * opens its PR. Answers the stack and the run once its preview left `starting`.
 */
export async function runWithTextPreview(
  t: ExecutionContext,
  env: Record<string, string>,
  { name, label, text, timeoutMs }: { name: string; label: string; text: string; timeoutMs: number },
): Promise<{ svc: TestStack; run: any }> {
  const forge = new PullRequestsStandIn();
  await forge.start();
  t.teardown(() => forge.stop());
  const svc = await startTestStack({ env: { ...env, SVC_GIT_TOKEN: 'ghp_test', SVC_GITHUB_API_URL: forge.url } });
  t.teardown(() => svc.stop());
  new GitHubStandIn().createRepo('acme', name, {
    files: {
      '.svc/preview.yaml': 'preview:\n  type: server\n  command: node server.mjs\n  port: 8080\n',
      'server.mjs': textPreviewServer(label),
      'page.txt': 'before\n',
    },
  });
  const gitUrl = `https://github.com/acme/${name}`;
  const project = (await svc.request('POST', '/projects', { body: { gitUrl } })).body.project.id;
  const prompt = `printf '${text}\\n' > page.txt && git commit -qam 'the page'`;
  const runId = (await svc.request('POST', '/runs', { body: { agent: 'shell', project, prompt } })).body.run.id;
  const ended = await waitForRunState(svc, runId, undefined, timeoutMs);
  if (ended.state !== 'succeeded') {
    // What went wrong is in the run's own log: its last events, with the run.
    throw new Error(`run ${runId} ended ${ended.state}: ${JSON.stringify(ended)}\n${await lastRunEvents(svc, runId)}`);
  }
  const run = await waitFor(
    async () => {
      const current = (await svc.request('GET', `/runs/${runId}`)).body.run;
      return current.previewState && current.previewState !== 'starting' ? current : undefined;
    },
    'the preview',
    timeoutMs,
  );
  return { svc, run };
}
