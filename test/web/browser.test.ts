// The dashboard in a real headless Chromium against a real stack (Temporal, worker, SQLite, git
// stand-ins): sign in with the link `svc serve` prints, dispatch a run and watch it succeed live,
// steer a running run, cancel one, follow a plan-run's children, and a spectator's view.
import test from 'ava';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { setSwitch, startPlanStack, type PlanFixture } from '../support/plan-fixture.ts';
import { waitFor } from '../support/processes.ts';
import type { TestStack } from '../support/stack.ts';
import { documentIsMarked, launchBrowser, markDocument, screenshot } from '../support/browser.ts';

const agentsFile = join(mkdtempSync(join(tmpdir(), 'svc-agents-')), 'agents.yaml');
writeFileSync(
  agentsFile,
  [
    'agents:',
    '  - name: poller',
    '    description: Waits for a steering message, then says what it got',
    '    steering: mid-run',
    '    command: ["bash", "-c", "echo ready; for i in $(seq 1 300); do out=$(curl -sf -H \\"Authorization: Bearer ' +
      '$SVC_API_TOKEN\\" $SVC_BASE_URL/runs/$SVC_RUN_ID/inbox); case $out in *body*) echo \\"got $out\\"; exit 0;; ' +
      'esac; sleep 0.2; done; exit 1"]',
    '  - name: sleeper',
    '    description: Sleeps until cancelled',
    '    command: ["bash", "-c", "echo sleeping; sleep 120"]',
  ].join('\n'),
);

let fixture: PlanFixture;
let svc: TestStack;
let project: string;
let stopStack: () => Promise<void> = async () => {};
let browser: Browser;
let operator: BrowserContext;

test.before(async () => {
  ({
    fixture,
    svc,
    project,
    stop: stopStack,
  } = await startPlanStack('acme', 'dashboard', {
    env: {
      SVC_AGENTS_FILE: agentsFile,
      SVC_AUTH: 'public',
      SVC_PUBLIC_ALLOWLIST: 'acme',
      SVC_TEMPORAL_UI_URL: 'http://temporal-ui.test/',
    },
  }));
  browser = await launchBrowser();
  operator = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: 'light' });
  // Layout shifts not caused by the user, summed per document (Chromium's layout-shift entries).
  await operator.addInitScript(`window.svcShift = 0; new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) if (!entry.hadRecentInput) window.svcShift += entry.value;
  }).observe({ type: 'layout-shift', buffered: true });`);
});
test.after.always(async () => {
  await browser?.close();
  await stopStack();
});

async function operatorPage(path: string): Promise<Page> {
  const page = await operator.newPage();
  await page.goto(`${svc.url}${path}`);
  await page.locator('[data-live="live"]').waitFor();
  return page;
}

const dispatch = async (body: Record<string, unknown>) =>
  (await svc.request('POST', '/runs', { body: { project, ...body } })).body.run.id as string;

test.serial('the sign-in link stores the token and opens the runs page, held live by one stream', async (t) => {
  const page = await operator.newPage();
  const signedOut = await page.goto(`${svc.url}/`);
  t.is(signedOut?.status(), 200);
  // Public mode: without a token the visitor is a spectator, and may sign in.
  await page.getByRole('link', { name: 'Sign in' }).waitFor();
  const streams: string[] = [];
  page.on('request', (request) => request.url().includes('/events/stream') && streams.push(request.url()));
  await page.goto((await svc.stack.setupLink())!);
  await page.waitForURL(`${svc.url}/`);
  t.is(await page.evaluate(() => localStorage.getItem('svc.apiToken')), svc.token);
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  await page.locator('[data-live="live"]').waitFor();
  await page.getByRole('heading', { name: 'Runs' }).waitFor();
  t.is(streams.length, 1, 'one lifecycle connection per tab');
  await page.close();
});

test.serial('dispatch a run from the form and watch it reach succeeded, with its PR, without reloading', async (t) => {
  const list = await operatorPage('/ui/runs');
  await markDocument(list);
  const page = await operatorPage('/ui/dispatch');
  await page.getByLabel('Agent').selectOption('shell');
  await page.getByLabel('Project').selectOption(project);
  await page
    .getByLabel('Prompt')
    .fill('echo "from the dashboard"; sleep 1; echo change > dashboard.txt; git add -A; git commit -qm "Dashboard"');
  await page.getByRole('button', { name: 'Dispatch' }).click();
  await page.waitForURL(/\/ui\/runs\/run_[0-9a-z]+$/);
  const runId = page.url().split('/').pop()!;
  await markDocument(page);
  await page.locator('.run-page[data-state="succeeded"]').waitFor({ timeout: 90_000 });
  await page.getByTestId('pr-link').waitFor({ timeout: 30_000 });
  t.true(await documentIsMarked(page), 'the run page was never reloaded');
  t.regex(await page.locator('.tail').innerText(), /from the dashboard/);
  // Lines streamed in, cost and state changed, the PR appeared: the page did not jump.
  const shift = await page.evaluate<number>('window.svcShift');
  t.true(shift < 0.1, `cumulative layout shift ${shift}`);
  t.regex((await page.getByRole('link', { name: 'Temporal UI' }).getAttribute('href')) ?? '', new RegExp(runId));
  await screenshot(page, 'run');
  // The list page, open all along, followed the run through the lifecycle stream alone.
  await list.locator(`tr[data-run-id="${runId}"][data-state="succeeded"]`).waitFor();
  t.true(await documentIsMarked(list), 'the list was never reloaded');
  await Promise.all([page.close(), list.close()]);
});

test.serial("a run's page names its project owner/repo and the model its agent reported", async (t) => {
  // The shell agent is a command: a svc.usage line names the model it ran.
  const usage = JSON.stringify({ type: 'svc.usage', costUsd: 0.01, model: 'local-llama-3.1' });
  const runId = await dispatch({
    agent: 'shell',
    prompt: `echo '${usage}'; echo m > model.txt; git add -A; git commit -qm "Model"`,
  });
  const page = await operatorPage(`/ui/runs/${runId}`);
  await page.locator('.run-page[data-state="succeeded"]').waitFor({ timeout: 90_000 });
  await page.getByTestId('run-model').getByText('local-llama-3.1', { exact: true }).waitFor();
  const projectLink = page.getByTestId('project-link');
  await projectLink.getByText('acme/dashboard', { exact: true }).waitFor();
  t.is(await projectLink.getAttribute('title'), project);
  t.is(await projectLink.getAttribute('href'), `/ui/projects/${project}`);
  t.notRegex(await page.locator('.facts').first().innerText(), /anthropic/);
  await page.close();
});

test.serial('steer a running run: the message shows sent, then delivered when the agent claims it', async (t) => {
  const runId = await dispatch({ agent: 'poller', prompt: 'wait for a message' });
  const page = await operatorPage(`/ui/runs/${runId}`);
  await page.locator('.run-page[data-state="running"]').waitFor({ timeout: 60_000 });
  await page.locator('.tail').getByText('ready').waitFor({ timeout: 30_000 });
  await page.getByLabel('Message to the agent').fill('please also update the changelog');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.locator('[data-delivery="delivered"]').waitFor({ timeout: 30_000 });
  await page
    .locator('.tail')
    .getByText(/got .*please also update the changelog/)
    .waitFor();
  await page.locator('.run-page[data-state="succeeded"]').waitFor({ timeout: 60_000 });
  t.pass();
  await page.close();
});

test.serial('cancel a running run from its page', async (t) => {
  const runId = await dispatch({ agent: 'sleeper', prompt: 'sleep' });
  const page = await operatorPage(`/ui/runs/${runId}`);
  await page.locator('.tail').getByText('sleeping').waitFor({ timeout: 60_000 });
  page.once('dialog', (dialog) => void dialog.accept());
  await page.getByRole('button', { name: 'Cancel run' }).click();
  await page.locator('.run-page[data-state="cancelled"]').waitFor({ timeout: 60_000 });
  t.is(await page.getByRole('button', { name: 'Cancel run' }).count(), 0);
  const run = (await svc.request('GET', `/runs/${runId}`)).body.run;
  t.is(run.state, 'cancelled');
  await page.close();
});

test.serial('a plan-run page shows its children advance, one after another, live', async (t) => {
  const first = fixture.seeds[0]!;
  setSwitch(fixture, 'slow', first);
  // Dispatched from the form, as the project page's "Run this plan" link opens it.
  const page = await operatorPage(`/ui/plan-runs?project=${project}&plan=${fixture.planId}`);
  // The plan's projection trailing its run's (as on a loaded worker): until the page has read the
  // run running, its child is answered still dispatched. No lifecycle line follows the child's own
  // move, so the page must see the lag itself and re-read.
  let trailing = true;
  let trailed = 0;
  const planRunRead = (url: URL) =>
    url.origin === new URL(svc.url).origin && /^\/plan-runs\/plnr_[0-9a-z]+$/.test(url.pathname);
  await page.route(planRunRead, async (route) => {
    // Decided as the read is sent: one in flight when the hold ends is still held.
    const holding = trailing;
    const response = await route.fetch();
    const detail = await response.json();
    for (const child of detail.children) {
      if (!holding || child.state !== 'running') continue;
      child.state = 'dispatched';
      trailed += 1;
    }
    await route.fulfill({ status: response.status(), contentType: 'application/json', body: JSON.stringify(detail) });
  });
  const form = page.getByRole('form', { name: 'New plan-run' });
  await form.getByLabel('Agent').selectOption('shell');
  await form.getByText('Template, ref, overrides and limits').click();
  await form.getByLabel('Prompt template').fill(fixture.template);
  await form.getByRole('button', { name: 'Dispatch plan-run' }).click();
  await page.waitForURL(/\/ui\/plan-runs\/plnr_[0-9a-z]+$/);
  const id = page.url().split('/').pop()!;
  t.is((await svc.request('GET', `/plan-runs/${id}`)).body.planRun.planId, fixture.planId);
  await page.getByTestId('project-link').getByText('acme/dashboard', { exact: true }).waitFor();
  await markDocument(page);
  await waitFor(async () => trailed > 0 || undefined, 'the page to read the child behind its run', 60_000);
  await page.locator('tr[data-seq="1"][data-state="dispatched"]').waitFor();
  trailing = false;
  await page.locator('tr[data-seq="1"][data-state="running"]').waitFor({ timeout: 30_000 });
  await page.unrouteAll({ behavior: 'wait' });
  t.is(await page.locator('tr[data-seq="3"][data-state="pending"]').count(), 1);
  await screenshot(page, 'plan-run');
  setSwitch(fixture, 'slow', first, false);
  for (const seq of ['1', '2', '3'])
    await page.locator(`tr[data-seq="${seq}"][data-state="merged"]`).waitFor({ timeout: 90_000 });
  await page.locator('.page-header [data-state="succeeded"]').waitFor({ timeout: 30_000 });
  t.true(await documentIsMarked(page), 'the plan-run page was never reloaded');
  for (const [index, seed] of fixture.seeds.entries())
    t.regex(await page.locator(`tr[data-seq="${index + 1}"]`).innerText(), new RegExp(seed), 'children in plan order');
  // A child's "diff" opens its run's change: the seed's file it committed.
  const childRun = (await svc.request('GET', `/plan-runs/${id}`)).body.children[0].runId;
  await page.locator('tr[data-seq="1"]').getByTestId('child-diff').click();
  await page.waitForURL(`${svc.url}/ui/runs/${childRun}#diff`);
  await page.getByTestId('run-diff').locator('.diff-file').first().waitFor();
  const files = await page.getByTestId('diff-files').locator('li').allInnerTexts();
  t.is(files.length, 1, files.join(', '));
  t.regex(files[0]!, new RegExp(`^${first}\\.md \\+\\d+ −0$`));
  await page.close();
});

test.serial('the other pages render for the operator (screenshots for the docs)', async (t) => {
  for (const [path, name, heading] of [
    ['/ui/runs', 'runs', 'Runs'],
    ['/ui/dispatch', 'dispatch', 'Dispatch a run'],
    ['/ui/plan-runs', 'plan-runs', 'Plan-runs'],
    ['/ui/projects', 'projects', 'Projects'],
    [`/ui/projects/${project}`, 'project', null],
    ['/ui/agents', 'agents', 'Agents'],
    ['/ui/analytics', 'analytics', 'Analytics'],
    ['/ui/ops', 'ops', 'Ops'],
  ] as const) {
    const page = await operatorPage(path);
    if (heading) await page.getByRole('heading', { name: heading, exact: true }).waitFor();
    // Loaded when no placeholder is left (the lifecycle stream keeps the network busy for ever).
    // A locator, not waitForFunction: a string predicate is eval'd in the page, which its CSP forbids.
    await page.locator('[aria-busy="true"]').first().waitFor({ state: 'detached' });
    t.deepEqual(await page.locator('[role="alert"]').allInnerTexts(), [], `${path} shows no error`);
    await screenshot(page, name);
    await page.close();
  }
});

test.serial('on a phone the runs and run pages fit the screen, in the dark theme too', async (t) => {
  const phone = await browser.newContext({
    viewport: { width: 390, height: 844 },
    deviceScaleFactor: 2,
    isMobile: true,
    hasTouch: true,
    colorScheme: 'dark',
  });
  await phone.addInitScript((token) => localStorage.setItem('svc.apiToken', token), svc.token);
  const page = await phone.newPage();
  await page.goto(`${svc.url}/ui/runs`);
  await page.locator('tr[data-run-id]').first().waitFor();
  const fits = () => page.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth');
  t.true(await fits(), 'the runs page does not scroll sideways');
  const cut = await page.evaluate<string[]>(
    `[...document.querySelectorAll('td')].filter((td) => td.scrollWidth > td.clientWidth + 1).map((td) => ` +
      `td.dataset.label)`,
  );
  t.deepEqual(cut, [], 'no cell is wider than its card');
  await screenshot(page, 'runs-phone');
  await page.locator('tr[data-run-id] a').first().click();
  await page.locator('.run-page').waitFor();
  t.true(await fits(), 'the run page does not scroll sideways');
  await phone.close();
});

test.serial('keyboard: the skip link comes first and moves focus to the content', async (t) => {
  const page = await operatorPage('/ui/runs');
  await page.keyboard.press('Tab');
  t.is(await page.evaluate<string>('document.activeElement?.textContent'), 'Skip to content');
  await page.keyboard.press('Enter');
  await page.keyboard.press('Tab');
  t.true(
    await page.evaluate<boolean>('Boolean(document.activeElement?.closest("main"))'),
    'focus moved into the content',
  );
  await page.close();
});

test.serial('a spectator sees public views only: no operator controls, no lifecycle stream, a poll', async (t) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const requests: string[] = [];
  page.on('request', (request) => requests.push(new URL(request.url()).pathname));
  await page.goto(`${svc.url}/ui/runs`);
  await page.locator('[data-live="polling"]').waitFor();
  await page.locator('tr[data-run-id]').first().waitFor();
  t.is(await page.getByRole('link', { name: 'Dispatch' }).count(), 0);
  t.is(await page.getByRole('link', { name: 'New run' }).count(), 0);
  t.is(await page.locator('text=/Cost of the/').count(), 0, 'no spend for spectators');
  await page.locator('tr[data-run-id] a').first().click();
  await page.locator('.run-page').waitFor();
  t.is(await page.getByRole('heading', { name: 'Steer' }).count(), 0);
  t.is(await page.getByRole('button', { name: 'Cancel run' }).count(), 0);
  t.is(await page.getByRole('link', { name: 'Replicate' }).count(), 0);
  t.false(requests.includes('/events/stream'), 'spectators hold no lifecycle stream');
  t.is(await page.evaluate(() => localStorage.getItem('svc.apiToken')), null);
  await screenshot(page, 'spectator-run');
  await context.close();
});

test.serial('in the browser, API paths stay the API: the fallback never shadows them', async (t) => {
  const page = await browser.newPage();
  for (const [path, status] of [
    ['/openapi.json', 200],
    ['/runs', 200],
    ['/extensions/judge/verdicts.jsonl', 401],
    ['/runs/run_nope/bogus', 404],
  ] as const) {
    const response = await page.goto(`${svc.url}${path}`);
    t.is(response?.status(), status, path);
    t.regex(response?.headers()['content-type'] ?? '', /application\/json/, path);
  }
  const shell = await page.goto(`${svc.url}/ui/no/such/page`);
  t.is(shell?.status(), 200);
  await page.getByRole('heading', { name: 'Not found' }).waitFor();
  await page.close();
});
