// A nearly full disk takes no new run: the API refuses at the door (503 disk_nearly_full, nothing
// created) while its data directory's filesystem is below the floor, and a worker whose own disk
// is below it fails the run `disk_nearly_full` before it cuts a workspace. Thresholds are set
// above this machine's real free space, so the refusals read the real filesystem.
import test from 'ava';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { dataPaths, loadConfig } from '../../platform/config.ts';
import { startStack } from '../../stack/stack.ts';
import { runEvents, startTestStack, testEnvironment, waitForRunState } from '../support/stack.ts';

/** More MiB than any disk of this machine has. */
const ABOVE_ANY_DISK = '999999999';

test('below the floor POST /runs answers 503 disk_nearly_full and creates nothing; above it, runs go', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-disk-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const full = await startTestStack({ dataDir, env: { SVC_DISK_MIN_FREE_MIB: ABOVE_ANY_DISK } });
  const refused = await full.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo hi' } });
  t.is(refused.status, 503, refused.text);
  t.is(refused.body.error.code, 'disk_nearly_full');
  t.regex(
    refused.body.error.message,
    /disk is nearly full: .* free of .*, below 999999999 MiB \(SVC_DISK_MIN_FREE_MIB\)/,
  );
  t.true(refused.body.error.hint.includes(dataDir), 'the hint names the data directory');
  t.is(refused.headers.get('retry-after'), '60');
  t.deepEqual((await full.request('GET', '/runs')).body.runs, [], 'no run was created');
  t.false(existsSync(dataPaths.workspaces(dataDir)) && readdirSync(dataPaths.workspaces(dataDir)).length > 0);
  await full.stop();

  const roomy = await startTestStack({ dataDir });
  t.teardown(() => roomy.stop());
  const accepted = await roomy.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo hi' } });
  t.is(accepted.status, 201, accepted.text);
  t.is((await waitForRunState(roomy, accepted.body.run.id)).state, 'succeeded');
});

test('a worker whose disk is below the floor fails the run disk_nearly_full before any workspace', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-disk-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const taskQueue = `test-${randomBytes(6).toString('hex')}`;
  // The API's disk has room (its floor is off): the worker's is the one that refuses.
  const api = await startTestStack({
    dataDir,
    worker: false,
    env: { SVC_TASK_QUEUE: taskQueue, SVC_DISK_MIN_FREE_MIB: '0', SVC_DISK_MIN_FREE_PERCENT: '0' },
  });
  t.teardown(() => api.stop());
  const { env } = await testEnvironment({
    dataDir,
    env: { SVC_TASK_QUEUE: taskQueue, SVC_API_URL: api.url, SVC_DISK_MIN_FREE_MIB: ABOVE_ANY_DISK },
  });
  const worker = await startStack({ config: loadConfig(env), api: false, worker: true, noAuth: false, log: () => {} });
  t.teardown(() => worker.stop());

  const dispatched = await api.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo never' } });
  t.is(dispatched.status, 201, dispatched.text);
  const run = await waitForRunState(api, dispatched.body.run.id);
  t.like(run, { state: 'failed', failureReason: 'disk_nearly_full' });
  const result = (await runEvents(api, run.id)).find(
    (event) => event.kind === 'state_change' && event.payload.type === 'result',
  );
  t.regex(result?.payload.message ?? '', /^the worker's disk is nearly full: .* free of .*, below 999999999 MiB/);
  t.false(existsSync(join(dataPaths.workspaces(dataDir), run.id)), 'no workspace was cut');
  t.false(existsSync(join(dataPaths.sandboxes(dataDir), run.id)), 'no sandbox was made');
});
