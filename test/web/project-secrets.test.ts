// A project's secrets page in a real headless Chromium against a real stack: reached from the
// project's page, add a secret, replace one (a run then gets the new value), list them without their
// values, a refused name shows the server's hint and stores nothing, remove one after confirming;
// a spectator gets neither the link nor the page's data.
import test from 'ava';
import { createHash } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, screenshot } from '../support/browser.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { runStdout, startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

const github = new GitHubStandIn();
github.createRepo('acme', 'vault-page');

const FIRST = 'npm-token-5b1e9c07d3a2f8';
const SECOND = 'api-key-e47d0a93c6b21f58';
const REPLACED = 'api-key-replaced-0c9f7a2e61d4';
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

let svc: TestStack;
let browser: Browser;
let project: string;

test.before(async () => {
  // Public mode: a visitor without a token is a spectator of acme's projects.
  svc = await startTestStack({ env: { SVC_AUTH: 'public', SVC_PUBLIC_ALLOWLIST: 'acme' } });
  browser = await launchBrowser();
  const created = await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/vault-page' } });
  if (created.status !== 201) throw new Error(created.text);
  project = created.body.project.id;
});
test.after.always(async () => {
  await browser?.close();
  await svc?.stop();
});

const listed = async () =>
  ((await svc.request('GET', `/projects/${project}/secrets`)).body.secrets as { name: string; scope: string }[]).map(
    ({ name, scope }) => `${name}:${scope}`,
  );

async function setSecret(page: Page, name: string, value: string, scope?: 'run' | 'setup'): Promise<void> {
  const form = page.getByRole('form', { name: 'Set a secret' });
  await form.getByLabel('Name').fill(name);
  await form.getByLabel('Value').fill(value);
  if (scope) await form.getByLabel('Scope').selectOption(scope);
  await form.getByRole('button', { name: 'Set secret' }).click();
}

test.serial('the operator adds, replaces, lists and removes secrets; values are never shown back', async (t) => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: 'light' });
  await context.addInitScript(`localStorage.setItem('svc.apiToken', ${JSON.stringify(svc.token)})`);
  const page = await context.newPage();
  const urls: string[] = [];
  page.on('request', (request) => urls.push(request.url()));
  await page.goto(`${svc.url}/ui/projects/${project}`);
  await page.locator('.page-header').getByRole('link', { name: 'Secrets', exact: true }).click();
  await page.waitForURL(`${svc.url}/ui/projects/${project}/secrets`);
  await page.getByRole('heading', { name: 'Secrets of acme/vault-page' }).waitFor();
  await page.getByText('No secrets yet.').waitFor();
  t.is(await page.getByLabel('Value').getAttribute('type'), 'password');

  // Add two.
  await setSecret(page, 'NPM_TOKEN', FIRST);
  await page.getByRole('status').getByText('Set NPM_TOKEN (run).').waitFor();
  await page.locator('tr[data-secret="NPM_TOKEN"][data-scope="run"]').waitFor();
  t.is(await page.getByLabel('Value').inputValue(), '', 'the value leaves the form once set');
  t.is(await page.getByLabel('Name').inputValue(), '');
  await setSecret(page, 'API_KEY', SECOND, 'setup');
  await page.getByRole('status').getByText('Set API_KEY (setup).').waitFor();
  await page.locator('tr[data-secret="API_KEY"][data-scope="setup"]').waitFor();
  t.deepEqual(await listed(), ['API_KEY:setup', 'NPM_TOKEN:run']);

  // Replace one: a new value and scope under the same name, still one row.
  await setSecret(page, 'API_KEY', REPLACED, 'run');
  await page.getByRole('status').getByText('Replaced API_KEY (run).').waitFor();
  await page.locator('tr[data-secret="API_KEY"][data-scope="run"]').waitFor();
  t.deepEqual(
    await page
      .locator('.secrets-table tbody tr')
      .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-secret'))),
    ['API_KEY', 'NPM_TOKEN'],
  );
  t.deepEqual(await listed(), ['API_KEY:run', 'NPM_TOKEN:run']);
  const table = await page.locator('.secrets-table').innerText();
  t.regex(table, /^Name\s+Scope\s+Updated\s+Action\nAPI_KEY\s+run\s+\d+ s ago\s+Remove\n/i);
  for (const value of [FIRST, SECOND, REPLACED]) {
    t.false((await page.content()).includes(value), 'no value is in the page');
    t.false(
      urls.some((url) => url.includes(value)),
      'a value travels in a request body, never in a URL',
    );
  }

  // A refused name: the server's reason and hint, nothing stored, the form kept for a fix.
  await setSecret(page, 'PATH', 'whatever-value-123');
  const refusal = page.getByRole('alert').filter({ hasText: 'Not set' });
  await refusal.waitFor();
  t.regex(await refusal.innerText(), /validation_error/);
  t.regex(await refusal.innerText(), /field "name": is set by svc in the sandbox/);
  t.is(await page.getByLabel('Name').inputValue(), 'PATH');
  await setSecret(page, 'lower_case', 'whatever-value-123');
  await refusal.getByText(/must look like an environment variable/).waitFor();
  t.deepEqual(await listed(), ['API_KEY:run', 'NPM_TOKEN:run']);
  await page.getByLabel('Name').fill('');
  await page.getByLabel('Value').fill('');
  await setSecret(page, 'NODE_AUTH_TOKEN', 'node-auth-9f2c4e71a0b3');
  await page.locator('tr[data-secret="NODE_AUTH_TOKEN"]').waitFor();
  t.is(await refusal.count(), 0, 'a later success clears the refusal');
  await page.locator('.project-secrets-page').evaluate('(element) => element.scrollIntoView()');
  await screenshot(page, 'project-secrets');

  // Remove: nothing happens until confirmed.
  page.once('dialog', (dialog) => void dialog.dismiss());
  await page.getByRole('button', { name: 'Remove NPM_TOKEN' }).click();
  t.is(await page.locator('tr[data-secret="NPM_TOKEN"]').count(), 1);
  t.deepEqual(await listed(), ['API_KEY:run', 'NODE_AUTH_TOKEN:run', 'NPM_TOKEN:run']);
  page.once('dialog', (dialog) => {
    t.regex(dialog.message(), /Remove NPM_TOKEN from acme\/vault-page\?/);
    void dialog.accept();
  });
  await page.getByRole('button', { name: 'Remove NPM_TOKEN' }).click();
  await page.getByRole('status').getByText('Removed NPM_TOKEN.').waitFor();
  await page.locator('tr[data-secret="NPM_TOKEN"]').waitFor({ state: 'detached' });
  t.deepEqual(await listed(), ['API_KEY:run', 'NODE_AUTH_TOKEN:run']);
  await context.close();

  // What the form set is what a run gets: the replaced value, the removed one gone.
  const prompt = 'echo "api $(printf %s "$API_KEY" | sha256sum | cut -c1-64)"; echo "npm ${NPM_TOKEN:-unset}"';
  const runId = (await svc.request('POST', '/runs', { body: { agent: 'shell', project, prompt } })).body.run.id;
  await waitForRunState(svc, runId, ['succeeded', 'failed'], 120_000);
  const stdout = await runStdout(svc, runId);
  t.true(stdout.includes(`api ${sha256(REPLACED)}`), stdout.join('\n'));
  t.true(stdout.includes('npm unset'), stdout.join('\n'));
});

test.serial("a spectator gets neither the link nor the page's data", async (t) => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const reads: string[] = [];
  page.on('request', (request) => reads.push(new URL(request.url()).pathname));
  await page.goto(`${svc.url}/ui/projects/${project}`);
  await page.locator(`.project-page[data-project-id="${project}"]`).waitFor();
  t.is(await page.getByRole('link', { name: 'Secrets', exact: true }).count(), 0);
  await page.goto(`${svc.url}/ui/projects/${project}/secrets`);
  await page.getByText("A project's secrets are for the operator.").waitFor();
  t.is(await page.locator('.secrets-table').count(), 0);
  t.is(await page.getByRole('form', { name: 'Set a secret' }).count(), 0);
  t.false(
    reads.some((path) => !path.startsWith('/ui/') && path.includes('/secrets')),
    reads.join(', '),
  );
  // And the API holds the line on its own.
  t.is((await svc.request('GET', `/projects/${project}/secrets`, { token: null })).status, 401);
  await context.close();
});
