// The dashboard at scale: the first load of the runs page in a fresh headless Chromium (no cache),
// on the embedded stack (SQLite) with 10k runs in the read model, measured from navigation start
// to the first row on screen; beside it, the GET /runs page the app asks for, timed alone.
// And the bundle: what a first visit downloads, gzipped.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { RunEntity, type Run } from '../../db/entities/index.ts';
import { initORM, migrate } from '../../db/orm.ts';
import { loadTemporalDevSettings, startTemporalDev } from '../../stack/temporal-dev.ts';
import { launchBrowser } from '../support/browser.ts';
import { freePort } from '../support/free-port.ts';
import { startTestStack } from '../support/stack.ts';
import { benchRunRow } from './analytics.ts';

export interface DashboardTiming {
  runs: number;
  firstLoadMsMedian: number;
  firstLoadMsMax: number;
  apiPageMsMedian: number;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function measureDashboardFirstLoad(count = 10_000, samples = 5): Promise<DashboardTiming> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-web-'));
  const readModel = await initORM({ databaseUrl: join(dataDir, 'svc.sqlite') });
  await migrate(readModel);
  const now = Date.now();
  for (let start = 0; start < count; start += 2000)
    await readModel
      .em()
      .insertMany(
        RunEntity,
        Array.from({ length: Math.min(2000, count - start) }, (_, i) =>
          benchRunRow(start + i, now),
        ) as unknown as Run[],
      );
  await readModel.close();
  const settings = loadTemporalDevSettings();
  settings.port = await freePort();
  settings.ui.enabled = false;
  const temporal = await startTemporalDev(mkdtempSync(join(tmpdir(), 'svc-bench-t-')), settings);
  const svc = await startTestStack({ dataDir, worker: false, temporalAddress: temporal.address });
  const browser = await launchBrowser();
  try {
    const apiPage: number[] = [];
    for (let i = 0; i < samples + 1; i++) {
      const started = performance.now();
      const page = await svc.request('GET', '/runs?limit=50&offset=0');
      if (page.body.total !== count) throw new Error(`expected ${count} runs, got ${page.body.total}`);
      if (i > 0) apiPage.push(performance.now() - started);
    }
    const loads: number[] = [];
    for (let i = 0; i < samples; i++) {
      // A new context each time: an empty cache, as on a first visit.
      const context = await browser.newContext();
      await context.addInitScript((token) => localStorage.setItem('svc.apiToken', token), svc.token);
      const page = await context.newPage();
      await page.goto(`${svc.url}/ui/runs`);
      await page.locator('tr[data-run-id]').first().waitFor();
      // performance.now() counts from the navigation's start.
      loads.push(await page.evaluate(() => performance.now()));
      await context.close();
    }
    return {
      runs: count,
      firstLoadMsMedian: Math.round(median(loads)),
      firstLoadMsMax: Math.round(Math.max(...loads)),
      apiPageMsMedian: Math.round(median(apiPage) * 10) / 10,
    };
  } finally {
    await browser.close();
    await svc.stop();
    await temporal.stop();
  }
}

/** JavaScript and CSS of the built dashboard, gzipped (kB): what a first visit downloads. */
export function dashboardBundleKb(dir = 'web/dist/assets'): { totalKb: number; files: Record<string, number> } {
  const files: Record<string, number> = {};
  for (const name of readdirSync(dir).filter((file) => /\.(js|css)$/.test(file)))
    files[name] = Math.round(gzipSync(readFileSync(join(dir, name)), { level: 9 }).length / 102.4) / 10;
  return { totalKb: Math.round(Object.values(files).reduce((sum, kb) => sum + kb, 0) * 10) / 10, files };
}
