// A real Chromium opens a run's preview from the dashboard: the run page, open since dispatch,
// shows the preview go live without a reload; "Open preview" logs the browser in (the run's
// HttpOnly cookie, no token in any URL) and opens the preview in a new tab, which shows the run's
// own work; a browser that did not log in is refused.
import test from 'ava';
import type { Browser } from 'playwright-core';
import { documentIsMarked, launchBrowser, markDocument, screenshot } from '../support/browser.ts';
import { createHtmlPreviewRepo } from '../support/preview-fixture.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

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
  const project = (await svc.request('POST', '/projects', { body: { gitUrl: createHtmlPreviewRepo('shown') } })).body
    .project.id;
  const prompt = "printf 'Built by the agent\\n' > page.txt && git commit -qam 'the page'";
  const runId = (await svc.request('POST', '/runs', { body: { agent: 'shell', project, prompt } })).body.run.id;

  // The page is open before the run ends: the preview, which comes after, shows without a reload.
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${svc.url}/ui/runs/${runId}`);
  await markDocument(page);
  await waitForRunState(svc, runId, undefined, 60_000);
  await page.getByTestId('preview-state').getByText('live').waitFor({ timeout: 60_000 });
  t.true(await documentIsMarked(page), 'the page was not reloaded');
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
