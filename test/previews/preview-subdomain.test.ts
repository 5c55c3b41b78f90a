// Subdomain mode (SVC_PREVIEW_MODE=subdomain): each preview at run-<id>.<SVC_PREVIEW_HOST>, its own
// origin. A real Chromium (resolving the test's names to loopback) opens the dashboard under the
// previews' domain, logs in to one run's preview and sees it; the same browser is refused at
// another run's preview (one cookie name for the domain, but signed for one run); an API reached
// outside the domain cannot set the cookie.
import test from 'ava';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM } from '../support/browser.ts';
import { createHtmlPreviewRepo } from '../support/preview-fixture.ts';
import { waitFor } from '../support/processes.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

const DOMAIN = 'previews.svc.test';
let svc: TestStack;
let browser: Browser;
const forge = new PullRequestsStandIn();

test.before(async () => {
  await forge.start();
  // The dashboard is opened under SVC_PREVIEW_HOST, a name the API answers to for that reason (DNS rebinding).
  svc = await startTestStack({
    env: {
      SVC_GIT_TOKEN: 'ghp_test',
      SVC_GITHUB_API_URL: forge.url,
      SVC_PREVIEW_MODE: 'subdomain',
      SVC_PREVIEW_HOST: DOMAIN,
    },
  });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', `--host-resolver-rules=MAP ${DOMAIN} 127.0.0.1, MAP *.${DOMAIN} 127.0.0.1`],
  });
});
test.after.always(async () => {
  await browser?.close();
  await svc?.stop();
  await forge.stop();
});

async function previewedRun(name: string, text: string): Promise<string> {
  const gitUrl = createHtmlPreviewRepo(name);
  const project = (await svc.request('POST', '/projects', { body: { gitUrl } })).body.project.id;
  const prompt = `printf '${text}\\n' > page.txt && git commit -qam 'the page'`;
  const runId = (await svc.request('POST', '/runs', { body: { agent: 'shell', project, prompt } })).body.run.id;
  await waitForRunState(svc, runId, undefined, 60_000);
  await waitFor(
    async () => (await svc.request('GET', `/runs/${runId}`)).body.run.previewState === 'live',
    `${name}'s preview live`,
    60_000,
  );
  return runId;
}

test("each preview is its own origin under SVC_PREVIEW_HOST; one run's cookie opens no other", async (t) => {
  const [first, second] = [await previewedRun('sub-one', 'First run'), await previewedRun('sub-two', 'Second run')];
  t.deepEqual((await svc.request('GET', '/preview/config')).body, { mode: 'subdomain', host: DOMAIN });
  // Reached at 127.0.0.1, the API is outside the previews' domain: it cannot set their cookie.
  const outside = await svc.request('POST', `/runs/${first}/preview/login`, { body: {} });
  t.is(outside.status, 400);
  t.is(outside.headers.get('set-cookie'), null);

  const api = `http://${DOMAIN}:${new URL(svc.url).port}`;
  const context = await browser.newContext();
  await context.addInitScript(`localStorage.setItem('svc.apiToken', ${JSON.stringify(svc.token)})`);
  const page = await context.newPage();
  await page.goto(`${api}/ui/runs/${first}`);
  await page.getByTestId('preview-state').getByText('live').waitFor();
  const [tab] = await Promise.all([
    context.waitForEvent('page'),
    page.getByRole('button', { name: 'Open preview' }).click(),
  ]);
  await tab.getByRole('heading', { name: 'First run' }).waitFor({ timeout: 30_000 });
  const origin = new URL(tab.url());
  t.is(origin.hostname, `run-${first}.${DOMAIN}`);
  t.is(origin.pathname, '/', 'the preview has its whole origin, no prefix');
  const cookie = (await context.cookies(tab.url())).find((entry) => entry.name === 'svc_preview');
  t.like(cookie, { domain: `.${DOMAIN}`, httpOnly: true, sameSite: 'Lax', path: '/' });

  // The browser sends the same cookie to the second run's origin: signed for the first, refused.
  const other = await tab.goto(`http://run-${second}.${DOMAIN}:${origin.port}/`);
  t.is(other?.status(), 401);
  // Logged in to the second too, the browser has one cookie for the domain: the latest login's.
  const login = await page.evaluate(
    async ([runId, token]) =>
      (
        await fetch(`/runs/${runId}/preview/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: '{}',
          credentials: 'include',
        })
      ).json(),
    [second, svc.token] as const,
  );
  t.is(new URL((login as { url: string }).url).hostname, `run-${second}.${DOMAIN}`);
  await tab.goto((login as { url: string }).url);
  t.is(await tab.getByRole('heading').textContent(), 'Second run');
  t.is((await tab.goto(origin.toString()))?.status(), 401, 'the first is now closed to this browser');
  // A name outside the domain, or not a run's, reaches no preview.
  t.is((await tab.goto(`http://${DOMAIN}:${origin.port}/`))?.status(), 404);
  await context.close();
  for (const runId of [first, second]) await svc.request('POST', `/runs/${runId}/preview/teardown`, { body: {} });
});
