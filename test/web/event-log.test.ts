// The run page's event log in a real Chromium against a real stack: human lines, agent output with
// its colours and nothing else (markup, titles, links, cursor moves stay text), the raw event one
// click away, times to the millisecond, "load earlier" back to the first event, and the download.
import test from 'ava';
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, screenshot } from '../support/browser.ts';
import { NOISY_LINES, NOISY_SCRIPT, NUMBERED_LINES } from '../support/noisy-log.ts';
import { runEvents, startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

let svc: TestStack;
let browser: Browser;
let runId: string;
let seqs: number[];

test.before(async () => {
  svc = await startTestStack();
  browser = await launchBrowser();
  runId = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: NOISY_SCRIPT } })).body.run.id;
  await waitForRunState(svc, runId);
  seqs = (await runEvents(svc, runId)).map((event) => (event as unknown as { seq: number }).seq);
});
test.after.always(async () => {
  await browser?.close();
  await svc?.stop();
});

async function runPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  await context.addInitScript(`localStorage.setItem('svc.apiToken', ${JSON.stringify(svc.token)})`);
  const page = await context.newPage();
  await page.goto(`${svc.url}/ui/runs/${runId}`);
  await page.locator('.run-page[data-state="succeeded"]').waitFor({ timeout: 60_000 });
  return page;
}

const line = (page: Page, text: string) => page.locator('.tail-line', { hasText: text });

// One page a click; the button reads "Loading…" until its page is in, so each click waits for it
// and the loop ends only on the start-of-log note, never on a button momentarily gone.
async function loadToStart(page: Page): Promise<void> {
  const start = page.locator('.tail-note', { hasText: 'Start of the log' });
  const earlier = page.getByRole('button', { name: 'Load earlier lines' });
  for (let clicks = 0; clicks < 10 && !(await start.count()); clicks++) {
    await earlier.or(start).first().waitFor();
    if (await earlier.count()) await earlier.click();
  }
  await start.waitFor();
}

test.serial('the log opens at its end, in human lines; load earlier reaches the first event', async (t) => {
  t.true(seqs.length > 2 * 500, 'a log of more than two pages');
  const page = await runPage();
  const tail = page.locator('.tail');
  await line(page, 'Run succeeded (exit 0)').waitFor();
  await line(page, 'the end').waitFor();
  t.is(await line(page, 'the end').locator('.tail-label').innerText(), 'err');
  t.is(await tail.locator('.tail-line').count(), 500, 'the last page only');
  t.is(await tail.locator('.tail-line').last().getAttribute('data-seq'), String(seqs.at(-1)));
  t.false((await tail.innerText()).includes('"payload"'), 'no raw JSON in the lines');

  await loadToStart(page);
  t.is(await tail.locator('.tail-line').count(), seqs.length, 'every event, once');
  t.is(await tail.locator('.tail-line').first().getAttribute('data-seq'), String(seqs[0]));
  t.is(await tail.locator('.tail-line').first().locator('.tail-body').innerText(), 'Run queued');
  await line(page, `line ${NUMBERED_LINES}`).waitFor();
  t.regex(await line(page, 'Sandbox started').first().innerText(), /svc\s+Sandbox started \(/);

  // Local time shown; the date, milliseconds and UTC instant on hover.
  const time = tail.locator('.tail-line').first().locator('.tail-time');
  t.regex(await time.innerText(), /^\d\d:\d\d:\d\d$/);
  t.regex((await time.getAttribute('title')) ?? '', /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} local \(.+Z\)$/);
  await page.context().close();
});

test.serial('agent output keeps its colours; hostile sequences stay inert text', async (t) => {
  const page = await runPage();
  await loadToStart(page);
  const coloured = line(page, 'bold red');
  await coloured.waitFor();
  const red = coloured.locator('span.ansi-fg-1.ansi-bold');
  t.is(await red.innerText(), 'bold red');
  // In the page: its globals are not Node's.
  const style = (property: string) =>
    red.evaluate((node, name) => (globalThis as any).getComputedStyle(node)[name] as string, property);
  t.is(await style('color'), 'rgb(255, 123, 114)');
  t.is(await style('fontWeight'), '700');
  t.is(await coloured.locator('span.ansi-fg-2').innerText(), 'green');
  t.is(await coloured.locator('.tail-body').innerText(), 'bold red then green plain');

  // Markup an agent prints is text, never elements.
  const tail = page.locator('.tail');
  t.is(await tail.locator('img, b, script, iframe').count(), 0);
  t.is(await line(page, 'onerror').locator('.tail-body').innerText(), NOISY_LINES.markup);
  // A window title, an OSC 8 link and cursor moves are dropped; their visible text stays.
  t.is(await line(page, 'after title').locator('.tail-body').innerText(), 'after title');
  t.is(await line(page, 'click me').locator('.tail-body').innerText(), 'click me done');
  t.is(await tail.locator('a').count(), 0, 'no link from an agent');
  t.is(await line(page, 'cursor moved').locator('.tail-body').innerText(), 'cursor moved');
  t.false(/[\u0000-\u0008\u000b-\u001f]/.test(await tail.innerText()), 'no control character reaches the page');
  const title = await page.title();
  t.false(/pwned|owned title/.test(title), title);
  await page.context().close();
});

test.serial('the raw event is one click away; the download is the text log', async (t) => {
  const page = await runPage();
  const done = line(page, 'Run succeeded');
  await done.waitFor();
  const seq = await done.getAttribute('data-seq');
  const toggle = page.getByRole('button', { name: `Raw event ${seq}`, exact: true });
  await toggle.click();
  const raw = done.locator('pre.tail-raw');
  const event = JSON.parse(await raw.innerText());
  t.is(event.kind, 'state_change');
  t.is(event.payload.state, 'succeeded');
  t.is(await toggle.getAttribute('aria-expanded'), 'true');
  await toggle.click();
  t.is(await raw.count(), 0);

  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Download log' }).click(),
  ]);
  t.is(download.suggestedFilename(), `${runId}.log`);
  const text = readFileSync((await download.path())!, 'utf8');
  const lines = text.trimEnd().split('\n');
  t.is(lines.length, seqs.length);
  t.regex(lines[0]!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z svc {3}Run queued$/);
  t.true(text.includes(' out   bold red then green plain\n'));

  // The log as a newcomer sees it: its start, one event opened.
  await loadToStart(page);
  const queued = await line(page, 'Run queued').getAttribute('data-seq');
  await page.getByRole('button', { name: `Raw event ${queued}`, exact: true }).click();
  await page.setViewportSize({ width: 1280, height: 640 });
  await page.evaluate('window.scrollTo(0, document.body.scrollHeight)');
  await page.locator('.tail').evaluate((node) => (node.scrollTop = 0));
  await page.mouse.move(0, 0);
  await screenshot(page, 'run-events');
  await page.context().close();
});
