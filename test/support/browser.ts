// A real headless Chromium (Debian's, driven by playwright-core) for the dashboard's tests, and
// where their screenshots go: SVC_SCREENSHOTS_DIR (docs/images to refresh the committed ones),
// else a temporary directory.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = process.env.SVC_CHROMIUM || '/usr/bin/chromium';

export async function launchBrowser(): Promise<Browser> {
  // --no-sandbox: the suite may run as root, where Chromium's own sandbox refuses to start.
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
}

const screenshots = process.env.SVC_SCREENSHOTS_DIR || mkdtempSync(join(tmpdir(), 'svc-screens-'));
mkdirSync(screenshots, { recursive: true });

/** Saves a screenshot of the page as `<name>.png`, without the blinking caret; answers its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  const path = join(screenshots, `${name}.png`);
  await page.screenshot({ path, fullPage: false, caret: 'hide', animations: 'disabled' });
  return path;
}

/** Marks the document: if the mark is still there later, the page was never reloaded. */
export async function markDocument(page: Page): Promise<void> {
  // Expressions as text: they run in the page, whose globals (window, document) Node's types lack.
  await page.evaluate('window.svcMark = 1');
}

export async function documentIsMarked(page: Page): Promise<boolean> {
  return page.evaluate<boolean>('window.svcMark === 1');
}
