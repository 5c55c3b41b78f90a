// A run's diff on its page, in a real headless Chromium against a real stack: a shell agent commits
// a change (a modified Python file, a rename, a binary file), and the run page's Diff card lists
// the files and shows the patch with syntax colours, unified then split.
import test from 'ava';
import type { Browser } from 'playwright-core';
import { launchBrowser, screenshot } from '../support/browser.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

const github = new GitHubStandIn();
const forge = new PullRequestsStandIn();
let svc: TestStack;
let browser: Browser;

const BEFORE = 'def greet(name):\n    # say hello\n    return "hello " + name\n\n\nprint(greet("world"))\n';

test.before(async () => {
  await forge.start();
  github.createRepo('acme', 'web-diff', { files: { 'app/greet.py': BEFORE, 'docs/old-name.md': '# Notes\n\nkept\n' } });
  svc = await startTestStack({ noAuth: true, env: { SVC_GIT_TOKEN: 'ghp_test', SVC_GITHUB_API_URL: forge.url } });
  browser = await launchBrowser();
});
test.after.always(async () => {
  await browser?.close();
  await svc?.stop();
  await forge.stop();
});

test('the run page lists the changed files and shows their patches, unified and split', async (t) => {
  const project = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/web-diff' } }))
    .body.project.id;
  const prompt = [
    'sed -i \'s/"hello " + name/f"hello, {name}!"/\' app/greet.py',
    'printf "\\nfor n in range(3):\\n    print(greet(str(n)))  # count\\n" >> app/greet.py',
    'git mv docs/old-name.md docs/notes.md',
    'printf "\\211PNG\\r\\n\\032\\n\\000" > logo.png',
    'git add -A && git commit -qm "Greet with an f-string"',
  ].join(' && ');
  const runId = (await svc.request('POST', '/runs', { body: { agent: 'shell', project, prompt } })).body.run.id;
  await waitForRunState(svc, runId, ['succeeded'], 120_000);
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await page.goto(`${svc.url}/ui/runs/${runId}#diff`);
  const card = page.getByTestId('run-diff');
  await card.locator('.diff-file').first().waitFor();
  t.deepEqual(await card.getByTestId('diff-files').locator('li').allInnerTexts(), [
    'app/greet.py +4 −1',
    'docs/old-name.md → docs/notes.md +0 −0',
    'logo.png +0 −0 binary',
  ]);
  const greet = card.locator('.diff-file[data-path="app/greet.py"]');
  t.true((await greet.locator('tr.diff-add').allInnerTexts()).some((line) => line.includes('f"hello, {name}!"')));
  t.is(await greet.locator('tr.diff-del').count(), 1);
  t.true((await greet.locator('.tok-keyword').allInnerTexts()).includes('return'), 'Python keywords coloured');
  t.true((await greet.locator('.tok-comment').allInnerTexts()).some((text) => text.includes('# count')));
  await t.notThrowsAsync(
    card.locator('.diff-file[data-status="renamed"]').getByText('Renamed without changes.').waitFor(),
  );
  await t.notThrowsAsync(
    card.locator('.diff-file[data-path="logo.png"]').getByText('Binary file: not shown.').waitFor(),
  );
  await card.getByRole('button', { name: 'Split' }).click();
  await greet.locator('table.split').waitFor();
  const row = greet.locator('table.split tr', { hasText: 'return' }).first();
  t.is(await row.locator('td.diff-del').count(), 1, 'the removal on the left');
  t.is(await row.locator('td.diff-add').count(), 1, 'its replacement on the right');
  await card.getByRole('button', { name: 'Unified' }).click();
  await card.scrollIntoViewIfNeeded();
  await card.evaluate('(element) => element.scrollIntoView()');
  await screenshot(page, 'run-diff');
});

test('a run that changed nothing says so on its page, in words, not as an error', async (t) => {
  github.createRepo('acme', 'web-diff-none');
  const project = (
    await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/web-diff-none' } })
  ).body.project.id;
  const runId = (await svc.request('POST', '/runs', { body: { agent: 'shell', project, prompt: 'echo looked only' } }))
    .body.run.id;
  await waitForRunState(svc, runId, ['succeeded'], 120_000);
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  await page.goto(`${svc.url}/ui/runs/${runId}`);
  const none = page.getByTestId('run-diff').getByTestId('diff-none');
  await none.waitFor();
  t.is(await none.innerText(), 'No change: this run left nothing to push or salvage.');
  t.is(await page.getByTestId('run-diff').locator('.error-box, [role="alert"]').count(), 0);
});
