// The dashboard's header dot in a real Chromium against a real stack: "live" while the stream is
// connected and the server ready; "degraded" once Temporal stops answering (GET /readyz is 503,
// the stream still connected); "live" again when Temporal is back.
import test from 'ava';
import { launchBrowser, screenshot } from '../support/browser.ts';
import { startIsolatedStack } from '../support/stack.ts';
import { startTemporalDev } from '../../stack/temporal-dev.ts';

test('the live dot turns degraded while Temporal is down, and live again when it is back', async (t) => {
  const isolated = await startIsolatedStack({ worker: false });
  let temporal = isolated.temporal;
  t.teardown(async () => {
    await isolated.stack.stop();
    await temporal.stop();
  });
  const browser = await launchBrowser();
  t.teardown(() => browser.close());
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 600 } })).newPage();
  await page.goto((await isolated.stack.setupLink())!);
  await page.locator('[data-live="live"]').waitFor();

  process.kill(-temporal.pid!, 'SIGKILL');
  // The poll is every 10 s: within a few of them.
  const dot = page.locator('[data-live="degraded"]');
  await dot.waitFor({ timeout: 45_000 });
  t.is(await dot.textContent(), 'degraded');
  t.regex((await dot.getAttribute('title')) ?? '', /not ready: the workflow engine \(Temporal\) is unreachable/);
  t.log(`screenshot: ${await screenshot(page, 'degraded')}`);

  temporal = await startTemporalDev(isolated.temporalDir, isolated.temporalSettings);
  await page.locator('[data-live="live"]').waitFor({ timeout: 60_000 });
  t.pass();
});
