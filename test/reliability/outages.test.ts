// Outages answer a clear 503 within seconds and heal by themselves: Temporal down is 503
// runtime_unreachable on what needs it (reads of the read model still answer); the database down
// is 503 database_unavailable with Retry-After on every route, and work accepted meanwhile is not
// lost. Both come back without a restart of svc.
import test from 'ava';
import { loadConfig } from '../../platform/config.ts';
import { startStack } from '../../stack/stack.ts';
import { startTemporalDev } from '../../stack/temporal-dev.ts';
import { waitFor } from '../support/processes.ts';
import { canRunPrivatePostgres, startPrivatePostgres } from '../support/private-postgres.ts';
import { request, startIsolatedStack, testEnvironment, waitForRunState } from '../support/stack.ts';

test.serial('Temporal down: dispatch is a 503 within seconds, reads still answer, and it heals', async (t) => {
  const isolated = await startIsolatedStack();
  let temporal = isolated.temporal;
  t.teardown(async () => {
    await isolated.stack.stop();
    await temporal.stop();
  });
  const { api } = isolated;
  const before = await api.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo before' } });
  await waitForRunState(api, before.body.run.id);
  process.kill(-temporal.pid!, 'SIGKILL');

  const started = Date.now();
  const refused = await api.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo during' } });
  const took = Date.now() - started;
  t.is(refused.status, 503, refused.text);
  t.is(refused.body.error.code, 'runtime_unreachable');
  t.is(refused.headers.get('retry-after'), '5');
  t.true(took < 10_000, `answered after ${took} ms`);
  t.is((await api.request('GET', '/runs')).status, 200, 'the read model still answers');
  t.is((await api.request('GET', `/runs/${before.body.run.id}`)).body.run.state, 'succeeded');

  temporal = await startTemporalDev(isolated.temporalDir, isolated.temporalSettings);
  const after = await waitFor(async () => {
    const response = await api.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo after' } });
    return response.status === 201 ? response : undefined;
  }, 'dispatch to work again');
  t.is((await waitForRunState(api, after.body.run.id, undefined, 90_000)).state, 'succeeded');
});

test.serial('the database down: every route is 503 with Retry-After; accepted work survives; it heals', async (t) => {
  if (!canRunPrivatePostgres()) {
    // CI has PostgreSQL's binaries (the suite's own server): this only happens on a bare laptop.
    t.log('no PostgreSQL binaries to run a private server');
    t.pass();
    return;
  }
  const postgres = await startPrivatePostgres();
  t.teardown(() => postgres.destroy());
  const environment = await testEnvironment({ env: { DATABASE_URL: postgres.url } });
  const stack = await startStack({
    config: loadConfig(environment.env),
    api: true,
    worker: true,
    noAuth: false,
    log: () => {},
  });
  t.teardown(() => stack.stop());
  const api = {
    request: (method: string, path: string, options?: Parameters<typeof request>[4]) =>
      request(stack.api!.url, stack.token.token, method, path, options),
  };
  t.is((await api.request('GET', '/runs')).status, 200);

  postgres.stop();
  for (const [method, path] of [
    ['GET', '/runs'],
    ['GET', '/projects'],
    ['GET', '/plan-runs'],
    ['GET', '/runs/run_000000000000'],
  ] as const) {
    const response = await api.request(method, path);
    t.is(response.status, 503, `${method} ${path}: ${response.text}`);
    t.is(response.body.error.code, 'database_unavailable');
    t.is(response.headers.get('retry-after'), '5');
  }
  // Dispatch needs Temporal, not the database: the run is accepted and projected once it is back.
  const accepted = await api.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo accepted' } });
  t.is(accepted.status, 201, accepted.text);

  postgres.start();
  await waitFor(async () => (await api.request('GET', '/runs')).status === 200, 'the API to read again');
  const run = await waitForRunState(api, accepted.body.run.id, undefined, 90_000);
  t.is(run.state, 'succeeded', 'nothing accepted during the outage was lost');
});
