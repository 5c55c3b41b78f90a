// GET /readyz, public like /healthz: 200 while the read model and Temporal answer; 503 with the
// catalogue's runtime_unreachable or database_unavailable (and Retry-After) while one does not,
// when /healthz still answers 200; ready again once it is back.
import test, { type ExecutionContext } from 'ava';
import { loadConfig } from '../../platform/config.ts';
import { startStack } from '../../stack/stack.ts';
import { startTemporalDev } from '../../stack/temporal-dev.ts';
import { canRunPrivatePostgres, startPrivatePostgres } from '../support/private-postgres.ts';
import { waitFor } from '../support/processes.ts';
import { request, startIsolatedStack, testEnvironment, type TestResponse } from '../support/stack.ts';

const anonymous = (url: string, path: string) => request(url, '', 'GET', path, { token: null });

async function notReady(t: ExecutionContext, url: string, code: string): Promise<TestResponse> {
  const answer = await waitFor(
    async () => {
      const response = await anonymous(url, '/readyz');
      return response.status === 503 ? response : undefined;
    },
    `readyz to say ${code}`,
    30_000,
  );
  t.deepEqual(Object.keys(answer.body), ['error'], 'the error envelope');
  t.is(answer.body.error.code, code);
  t.is(typeof answer.body.error.message, 'string');
  t.is(answer.headers.get('retry-after'), '5');
  t.is((await anonymous(url, '/healthz')).status, 200, 'liveness is not readiness');
  return answer;
}

test.serial('Temporal down: readyz is 503 runtime_unreachable; back: 200', async (t) => {
  const isolated = await startIsolatedStack({ worker: false });
  let temporal = isolated.temporal;
  t.teardown(async () => {
    await isolated.stack.stop();
    await temporal.stop();
  });
  const url = isolated.stack.api!.url;
  t.is((await anonymous(url, '/readyz')).status, 200);

  process.kill(-temporal.pid!, 'SIGKILL');
  const answer = await notReady(t, url, 'runtime_unreachable');
  t.regex(answer.body.error.hint, /TEMPORAL_ADDRESS/);

  temporal = await startTemporalDev(isolated.temporalDir, isolated.temporalSettings);
  await waitFor(async () => (await anonymous(url, '/readyz')).status === 200, 'readyz to be 200 again', 60_000);
});

test.serial('the database down: readyz is 503 database_unavailable, naming no driver detail; back: 200', async (t) => {
  if (!canRunPrivatePostgres()) {
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
    worker: false,
    noAuth: false,
    log: () => {},
  });
  t.teardown(() => stack.stop());
  const url = stack.api!.url;
  t.is((await anonymous(url, '/readyz')).status, 200);

  postgres.stop();
  const answer = await notReady(t, url, 'database_unavailable');
  t.is(answer.body.error.hint, 'check DATABASE_URL', "an anonymous caller learns nothing of the driver's error");
  t.notRegex(answer.text, /ECONN|postgres|127\.0\.0\.1|:\d{4,5}/, 'nor where the database is');

  postgres.start();
  await waitFor(async () => (await anonymous(url, '/readyz')).status === 200, 'readyz to be 200 again', 60_000);
});
