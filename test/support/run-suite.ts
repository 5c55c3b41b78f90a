// The test suite's outer harness: starts one real Temporal dev server for the whole run, builds
// the workflow bundle once, checks PostgreSQL, then runs ava with the addresses in the
// environment. Tests that need to kill Temporal start their own.
//   node test/support/run-suite.ts [ava args…]
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startTemporalDev, loadTemporalDevSettings } from '../../stack/temporal-dev.ts';
import { buildWorkflowBundle } from '../../worker/workflow-bundle.ts';
import { freePort } from './free-port.ts';

const postgresUrl = process.env.SVC_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const inCi = process.env.CI === 'true' || process.env.CI === '1';

async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

const workDir = mkdtempSync(join(tmpdir(), 'svc-suite-'));
const settings = loadTemporalDevSettings();
settings.port = await freePort();
settings.ui.enabled = false;
settings.dbFile = join(workDir, 'temporal.sqlite');
const temporal = await startTemporalDev(workDir, settings);
console.log(`suite: Temporal dev server at ${temporal.address} (CLI from ${temporal.cli.source})`);

const bundlePath = join(workDir, 'workflow-bundle.js');
writeFileSync(bundlePath, (await buildWorkflowBundle()).code);

const hasPostgres = await postgresReachable();
if (!hasPostgres && inCi) {
  console.error(`suite: PostgreSQL is not reachable at ${postgresUrl}, and CI must run the PostgreSQL leg`);
  process.exit(1);
}
console.log(
  hasPostgres
    ? `suite: PostgreSQL at ${postgresUrl}`
    : 'suite: PostgreSQL unreachable: its tests are skipped (never in CI)',
);

const ava = spawn(
  process.execPath,
  ['--no-warnings', join('node_modules', 'ava', 'entrypoints', 'cli.js'), ...process.argv.slice(2)],
  {
    stdio: 'inherit',
    env: {
      ...process.env,
      SVC_TEST_TEMPORAL_ADDRESS: temporal.address,
      SVC_WORKFLOW_BUNDLE: bundlePath,
      SVC_TEST_POSTGRES_URL: hasPostgres ? postgresUrl : '',
      // Tests kill Temporal on purpose; the SDK's retry warnings would bury ava's report.
      SVC_LOG_LEVEL: process.env.SVC_LOG_LEVEL ?? 'ERROR',
    },
  },
);
const code = await new Promise<number>((resolve) =>
  ava.once('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0))),
);
await temporal.stop();
rmSync(workDir, { recursive: true, force: true });
process.exit(code);
