// The dashboard against a hostile agent: whatever a run prints, or puts in its prompt, is shown as
// text in the operator's browser — no markup, no script — and the operator token travels only in
// an Authorization header, never in a URL or a cookie.
import test from 'ava';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../support/browser.ts';
import { startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

let svc: TestStack;
let browser: Browser;
test.before(async () => {
  svc = await startTestStack();
  browser = await launchBrowser();
});
test.after.always(async () => {
  await browser?.close();
  await svc?.stop();
});

const HOSTILE = [
  '<img src=x onerror="window.pwned=1">',
  '<script>window.pwned=2</script>',
  '<a href="javascript:window.pwned=3">click</a>',
];

test('agent output and prompts render as text; the token never leaves the Authorization header', async (t) => {
  const prompt = HOSTILE.map((line) => `echo '${line}'`).join('\n');
  const { body } = await svc.request('POST', '/runs', { body: { agent: 'shell', prompt } });
  const runId = body.run.id as string;
  t.is((await waitForRunState(svc, runId)).state, 'succeeded');

  const context = await browser.newContext();
  await context.addInitScript((token) => localStorage.setItem('svc.apiToken', token), svc.token);
  const page = await context.newPage();
  const requests: { url: string; authorization: string | undefined }[] = [];
  page.on('request', (request) =>
    requests.push({ url: request.url(), authorization: request.headers().authorization }),
  );
  await page.goto(`${svc.url}/ui/runs/${runId}`);
  await page.locator('.run-page[data-state="succeeded"]').waitFor();
  await page.locator('.tail').getByText(HOSTILE[0]!, { exact: true }).waitFor();
  const tail = await page.locator('.tail').innerText();
  for (const line of HOSTILE) t.true(tail.includes(line), `shown as text: ${line}`);
  t.is(await page.locator('.tail img, .tail script, .tail a').count(), 0, 'no element made from agent output');
  t.is(await page.locator('.prompt pre').innerText(), prompt);
  await page.goto(`${svc.url}/ui/runs`);
  await page.locator(`tr[data-run-id="${runId}"]`).waitFor();
  t.is(await page.locator('.prompt-cell img, .prompt-cell a').count(), 0);
  t.is(await page.evaluate<unknown>('window.pwned'), undefined, 'no script of the agent ran');

  t.is(await page.evaluate<string>('document.cookie'), '', 'no cookie carries anything');
  t.true(requests.length > 3);
  for (const request of requests) t.false(request.url.includes(svc.token), `no token in ${request.url}`);
  const apiCalls = requests.filter((request) =>
    /^\/(runs|projects|agents|whoami|events)(\/|$)/.test(new URL(request.url).pathname),
  );
  t.true(apiCalls.length > 0);
  for (const call of apiCalls) t.is(call.authorization, `Bearer ${svc.token}`, call.url);
  await context.close();
});
