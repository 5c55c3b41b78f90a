// One `svc serve` per data directory: a second one refuses at once, naming the first, and changes
// nothing; the first goes on dispatching. A serve that died leaves a record and an orphaned
// Temporal server that block nothing: the next serve reaps the server and takes over. API replicas
// (external Temporal, PostgreSQL) share a directory, but never with such a serve.
import test from 'ava';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isProcessAlive, processStartTime } from '../../platform/processes.ts';
import { claimDataDir, DataDirInUseError } from '../../stack/instance-lock.ts';
import { findTemporalCli, loadTemporalDevSettings, startTemporalDev } from '../../stack/temporal-dev.ts';
import { freePort } from '../support/free-port.ts';
import { spawnSvc, waitFor, waitForOutput, type ChildHandle } from '../support/processes.ts';
import { request, waitForRunState } from '../support/stack.ts';

function cleanEnv(overrides: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['TEMPORAL_ADDRESS', 'DATABASE_URL', 'SVC_API_TOKEN', 'SVC_TASK_QUEUE', 'SVC_AGENTS_FILE'])
    delete env[name];
  return { ...env, ...overrides };
}

async function up(serve: ChildHandle) {
  await waitForOutput(serve, /svc is up/, 120_000);
  const url = (await waitForOutput(serve, /API: +(http:\/\/\S+)/))[1]!;
  const token = (await waitForOutput(serve, /operator token: +(\S+)/))[1]!;
  const api = {
    request: (method: string, path: string, options?: any) =>
      request(url, readFileSync(token, 'utf8').trim(), method, path, options),
  };
  return { url, api };
}

async function dispatches(api: Awaited<ReturnType<typeof up>>['api'], prompt: string): Promise<string> {
  const runId = (await api.request('POST', '/runs', { body: { agent: 'shell', prompt } })).body.run.id as string;
  return (await waitForRunState(api, runId, undefined, 90_000)).state as string;
}

test.serial('a second svc serve on a held data directory refuses at once; a dead one blocks nothing', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-one-instance-'));
  const temporalPort = await freePort();
  const env = cleanEnv({
    SVC_DATA_DIR: dataDir,
    SVC_PORT: String(await freePort()),
    SVC_TEMPORAL_PORT: String(temporalPort),
    SVC_TEMPORAL_UI: '0',
  });
  const first = spawnSvc(['serve'], env);
  t.teardown(() => first.child.kill('SIGKILL'));
  const { url, api } = await up(first);
  const record = readFileSync(join(dataDir, 'instance.json'), 'utf8');
  t.like(JSON.parse(record), { pid: first.child.pid, url, temporalAddress: `127.0.0.1:${temporalPort}` });
  const temporalPid = JSON.parse(readFileSync(join(dataDir, 'temporal', 'dev.pid'), 'utf8')).pid as number;
  t.teardown(() => isProcessAlive(temporalPid) && process.kill(-temporalPid, 'SIGKILL'));

  // Other ports, so only the data directory can be what stops it.
  const secondEnv = { ...env, SVC_PORT: String(await freePort()), SVC_TEMPORAL_PORT: String(await freePort()) };
  const second = spawnSvc(['serve'], secondEnv);
  t.teardown(() => second.child.kill('SIGKILL'));
  t.is(await second.exited, 6, second.output());
  t.is(
    second.output(),
    `svc: data directory ${dataDir} is in use by the svc serve with pid ${first.child.pid} at ${url}: ` +
      'stop it first, or give this one its own SVC_DATA_DIR\n',
  );
  t.is(readFileSync(join(dataDir, 'instance.json'), 'utf8'), record, 'the record is the first one’s still');
  t.true(isProcessAlive(temporalPid), "the first one's Temporal server was left alone");
  t.is(first.child.exitCode, null);
  t.is(await dispatches(api, 'echo still here'), 'succeeded', 'the first one still dispatches');
  t.is((await api.request('GET', '/readyz')).status, 200);

  // A worker on the same directory joins the serve: its Temporal, though TEMPORAL_ADDRESS is unset.
  const worker = spawnSvc(['worker'], env);
  t.teardown(() => worker.child.kill('SIGKILL'));
  await waitForOutput(worker, /worker: polling task queue "svc"/, 120_000);
  t.regex(worker.output(), new RegExp(`temporal: external cluster at 127\\.0\\.0\\.1:${temporalPort}`));
  worker.child.kill('SIGTERM');
  t.is(await worker.exited, 0, worker.output());

  // Killed outright: its record stays behind and its Temporal server (a group of its own) lives on.
  first.child.kill('SIGKILL');
  await first.exited;
  t.true(isProcessAlive(temporalPid));
  const third = spawnSvc(['serve'], env);
  t.teardown(() => third.child.kill('SIGKILL'));
  const next = await up(third);
  t.false(isProcessAlive(temporalPid), 'the orphaned server of the dead serve was reaped');
  t.like(JSON.parse(readFileSync(join(dataDir, 'instance.json'), 'utf8')), { pid: third.child.pid, url: next.url });
  t.is(await dispatches(next.api, 'echo taken over'), 'succeeded');
  third.child.kill('SIGTERM');
  t.is(await third.exited, 0, third.output());
});

test.serial("a Temporal dev server whose owner lives is never reaped by another's start", async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-owned-temporal-'));
  // Stand-ins: a "server" in a group of its own, and a live "owner" that is not this process.
  const server = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
  const owner = spawn('sleep', ['300'], { stdio: 'ignore' });
  t.teardown(() => {
    process.kill(-server.pid!, 'SIGKILL');
    owner.kill('SIGKILL');
  });
  await waitFor(async () => processStartTime(owner.pid!), 'the owner to start');
  mkdirSync(join(dataDir, 'temporal'));
  writeFileSync(
    join(dataDir, 'temporal', 'dev.pid'),
    JSON.stringify({ pid: server.pid, owner: { pid: owner.pid, startTime: processStartTime(owner.pid!) } }),
  );
  const settings = loadTemporalDevSettings({});
  settings.port = await freePort();
  settings.ui.enabled = false;
  await t.throwsAsync(startTemporalDev(dataDir, settings, findTemporalCli()), {
    message: new RegExp(`\\(pid ${server.pid}\\) belongs to the running process ${owner.pid}`),
  });
  t.true(isProcessAlive(server.pid!), 'the live owner’s server was not killed');
});

test('API replicas share a data directory; a serve that keeps its own things there shares it with none', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-replicas-dir-'));
  const first = await claimDataDir(dataDir, 'shared');
  t.teardown(() => first.release());
  first.announce({ url: 'http://127.0.0.1:1' });
  const second = await claimDataDir(dataDir, 'shared');
  t.teardown(() => second.release());
  const refused = await t.throwsAsync(claimDataDir(dataDir, 'exclusive'), { instanceOf: DataDirInUseError });
  t.is(refused?.holder?.pid, process.pid, 'named from the replicas’ record');
  await first.release();
  await second.release();
  const sole = await claimDataDir(dataDir, 'exclusive');
  t.teardown(() => sole.release());
  await t.throwsAsync(claimDataDir(dataDir, 'shared'), { instanceOf: DataDirInUseError });
});

test('a serve whose ports are taken says which and how to move it, and never uses what holds them', async (t) => {
  // A Temporal server another svc would have started: it answers this serve's readiness check.
  const held = mkdtempSync(join(tmpdir(), 'svc-held-ports-'));
  const settings = { ...loadTemporalDevSettings(), port: await freePort(), dbFile: join(held, 'temporal.sqlite') };
  settings.ui.enabled = false;
  const other = await startTemporalDev(held, settings);
  t.teardown(() => other.stop());
  const apiPort = await freePort();
  const env = cleanEnv({
    SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-own-dir-')),
    SVC_PORT: String(apiPort),
    SVC_TEMPORAL_PORT: String(settings.port),
    SVC_TEMPORAL_UI: '0',
  });
  const onTemporal = spawnSvc(['serve'], env);
  t.teardown(() => onTemporal.child.kill('SIGKILL'));
  t.is(await onTemporal.exited, 6, onTemporal.output());
  t.is(
    onTemporal.output().trim().split('\n').at(-1),
    `svc: 127.0.0.1:${settings.port} (the embedded Temporal server) is in use by another process: set ` +
      'SVC_TEMPORAL_PORT to a free port, or TEMPORAL_ADDRESS to use a Temporal server that is already running',
  );
  t.false(onTemporal.output().includes('svc is up'));

  // The API's port held: one line, no stack trace, and this serve's own Temporal server stopped.
  const holder = (await import('node:net')).createServer();
  await new Promise<void>((resolve) => holder.listen(apiPort, '127.0.0.1', resolve));
  t.teardown(() => holder.close());
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-own-dir-'));
  const onApi = spawnSvc(['serve'], { ...env, SVC_DATA_DIR: dataDir, SVC_TEMPORAL_PORT: String(await freePort()) });
  t.teardown(() => onApi.child.kill('SIGKILL'));
  t.is(await onApi.exited, 6, onApi.output());
  t.is(
    onApi.output().trim().split('\n').at(-1),
    `svc: 127.0.0.1:${apiPort} (the API) is in use by another process: give this one its own with --port or SVC_PORT`,
  );
  t.false(/at .*\.ts:\d+/.test(onApi.output()), 'no stack trace');
  t.false(existsSync(join(dataDir, 'temporal', 'dev.pid')), 'its own Temporal server is stopped');
});
