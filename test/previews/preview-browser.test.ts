// A real Chromium opens a run's preview from the dashboard: the run page shows the preview live,
// "Open preview" logs the browser in (the run's HttpOnly cookie, no token in any URL) and opens
// the preview in a new tab, which shows the run's own work; a browser that did not log in is refused.
import test from 'ava';
import type { Browser } from 'playwright-core';
import { launchBrowser, screenshot } from '../support/browser.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { waitFor } from '../support/processes.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

const SERVER = `
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
createServer((_request, response) => {
  response.setHeader('content-type', 'text/html');
  response.end('<h1>' + readFileSync('page.txt', 'utf8').trim() + '</h1>');
}).listen(Number(process.env.PORT), process.env.HOST);
`;

let svc: TestStack;
let browser: Browser;
const forge = new PullRequestsStandIn();

test.before(async () => {
  await forge.start();
  svc = await startTestStack({ noAuth: true, env: { SVC_GIT_TOKEN: 'ghp_test', SVC_GITHUB_API_URL: forge.url } });
  browser = await launchBrowser();
});
test.after.always(async () => {
  await browser?.close();
  await svc?.stop();
  await forge.stop();
});

test('the dashboard opens a live preview in a new tab; a browser without its cookie is refused', async (t) => {
  new GitHubStandIn().createRepo('acme', 'shown', {
    files: {
      '.svc/preview.yaml': 'preview:\n  type: server\n  command: node server.mjs\n  port: 3000\n',
      'server.mjs': SERVER,
      'page.txt': 'before\n',
    },
  });
  const project = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/shown' } })).body
    .project.id;
  const prompt = "printf 'Built by the agent\\n' > page.txt && git commit -qam 'the page'";
  const runId = (await svc.request('POST', '/runs', { body: { agent: 'shell', project, prompt } })).body.run.id;
  await waitForRunState(svc, runId, undefined, 60_000);
  await waitFor(
    async () => (await svc.request('GET', `/runs/${runId}`)).body.run.previewState === 'live',
    'the preview to go live',
    60_000,
  );

  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${svc.url}/ui/runs/${runId}`);
  await page.getByTestId('preview-state').getByText('live').waitFor();
  const [tab] = await Promise.all([
    context.waitForEvent('page'),
    page.getByRole('button', { name: 'Open preview' }).click(),
  ]);
  await tab.getByRole('heading', { name: 'Built by the agent' }).waitFor({ timeout: 30_000 });
  t.regex(tab.url(), new RegExp(`/p/${runId}/$`));
  t.false(tab.url().includes('token'), 'no credential in the URL');
  await screenshot(tab, 'preview');
  const cookies = await context.cookies(tab.url());
  t.like(
    cookies.find((cookie) => cookie.name === `svc_preview_${runId}`),
    { httpOnly: true, sameSite: 'Lax' },
  );

  // Another browser, without the cookie: refused.
  const stranger = await browser.newContext();
  const refused = await (await stranger.newPage()).goto(tab.url());
  t.is(refused?.status(), 401);
  await context.close();
  await stranger.close();
  await svc.request('POST', `/runs/${runId}/preview/teardown`, { body: {} });
});
