// A preview on the container backend: the same door (it connects out through the socket directory
// bound into the container) and the same proxy; the preview runs in a container of the agent image
// on the run's workspace, and teardown removes the container.
import test from 'ava';
import { startContainerEngine, waitUntilRemoved } from '../support/container-engine.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { waitFor } from '../support/processes.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { startTestStack, waitForRunState } from '../support/stack.ts';

const SERVER = `
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
createServer((_request, response) => response.end('boxed: ' + readFileSync('page.txt', 'utf8').trim()))
  .listen(Number(process.env.PORT), process.env.HOST);
`;

test('a run on the container backend gets its preview live in a container, reached through the proxy', async (t) => {
  const engine = await startContainerEngine();
  t.teardown(() => engine.stop());
  const forge = new PullRequestsStandIn();
  await forge.start();
  t.teardown(() => forge.stop());
  const svc = await startTestStack({
    env: { ...engine.env, SVC_GIT_TOKEN: 'ghp_test', SVC_GITHUB_API_URL: forge.url },
  });
  t.teardown(() => svc.stop());
  new GitHubStandIn().createRepo('acme', 'boxed-preview', {
    files: {
      '.svc/preview.yaml': 'preview:\n  type: server\n  command: node server.mjs\n  port: 8080\n',
      'server.mjs': SERVER,
      'page.txt': 'before\n',
    },
  });
  const project = (
    await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/boxed-preview' } })
  ).body.project.id;
  const prompt = "printf 'from a container\\n' > page.txt && git commit -qam 'the page'";
  const runId = (await svc.request('POST', '/runs', { body: { agent: 'shell', project, prompt } })).body.run.id;
  t.is((await waitForRunState(svc, runId, undefined, 120_000)).state, 'succeeded');
  const run = await waitFor(
    async () => {
      const current = (await svc.request('GET', `/runs/${runId}`)).body.run;
      return current.previewState && current.previewState !== 'starting' ? current : undefined;
    },
    'the preview',
    120_000,
  );
  t.is(run.previewState, 'live', JSON.stringify(run));
  const login = await svc.request('POST', `/runs/${runId}/preview/login`, { body: {} });
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  t.is(await (await fetch(login.body.url, { headers: { cookie } })).text(), 'boxed: from a container');
  t.like((await svc.request('POST', `/runs/${runId}/preview/teardown`, { body: {} })).body, { status: 'torn-down' });
  await waitUntilRemoved(engine.engine, `svc-${runId}-preview`, 30_000);
});
