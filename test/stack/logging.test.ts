// `svc serve`'s structured log, read from the real process: JSON lines with request id, run id and
// workflow id, one level setting, and none of svc's secrets anywhere in what the process prints.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScratchPostgresDatabase } from '../../db/scratch-postgres.ts';
import { postgresOrSkip, suitePostgresUrl, suiteTemporalAddress } from '../support/env.ts';
import { spawnSvc, waitForOutput } from '../support/processes.ts';
import { request, waitForRunState } from '../support/stack.ts';

const secret = (prefix: string) => `${prefix}${randomBytes(16).toString('hex')}`;

test('JSON log lines carry request, run and workflow ids and never a secret', async (t) => {
  if (!postgresOrSkip(t, 'postgresql')) return;
  const database = await createScratchPostgresDatabase(suitePostgresUrl()!);
  t.teardown(() => database.drop());
  const operatorToken = secret('op-');
  const gitToken = secret('ghp_');
  const judgeToken = secret('judge-');
  const dbPassword = secret('pw-');
  // Trust auth ignores the password, but svc must still treat it as one.
  const databaseUrl = database.url.replace('postgres://postgres@', `postgres://postgres:${dbPassword}@`);
  t.not(databaseUrl, database.url);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-log-')),
    SVC_PORT: '0',
    TEMPORAL_ADDRESS: suiteTemporalAddress(),
    DATABASE_URL: databaseUrl,
    SVC_TASK_QUEUE: `log-${randomBytes(4).toString('hex')}`,
    SVC_API_TOKEN: operatorToken,
    SVC_GIT_TOKEN: gitToken,
    SVC_JUDGE_EXPORT_TOKEN: judgeToken,
    SVC_LOG_LEVEL: 'info',
  };
  const serve = spawnSvc(['serve'], env);
  t.teardown(() => serve.child.kill('SIGKILL'));
  await waitForOutput(serve, /svc is up/, 60_000);
  const apiUrl = (await waitForOutput(serve, /API: +(http:\/\/\S+)/))[1]!;
  const setupLink = (await waitForOutput(serve, /(http:\/\/\S+\/setup\?code=\S+)/))[1]!;
  const setupCode = new URL(setupLink).searchParams.get('code')!;
  const api = {
    request: (method: string, path: string, options?: any) => request(apiUrl, operatorToken, method, path, options),
  };

  const dispatched = await api.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo logged' } });
  t.is(dispatched.status, 201);
  const runId = dispatched.body.run.id as string;
  t.is((await waitForRunState(api, runId)).state, 'succeeded');
  await api.request('GET', '/runs', { headers: { 'x-request-id': 'req-for-the-log' } });
  await request(apiUrl, `${operatorToken}x`, 'GET', '/runs');
  t.is((await fetch(setupLink, { redirect: 'manual' })).status, 200);
  serve.child.kill('SIGTERM');
  t.is(await serve.exited, 0);

  const output = serve.output();
  for (const [name, value] of Object.entries({ operatorToken, gitToken, judgeToken, dbPassword }))
    t.false(output.includes(value), `${name} appears in the process output`);
  const lines = output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
  t.true(lines.length > 5);
  for (const line of lines) {
    t.truthy(line.level && line.time && line.msg, JSON.stringify(line));
    t.is(line.taskToken, undefined);
  }
  t.false(
    lines.some((line) => JSON.stringify(line).includes(setupCode)),
    'the setup code is not logged',
  );
  const requests = lines.filter((line) => line.msg === 'request');
  t.truthy(
    requests.find((line) => line.requestId === 'req-for-the-log' && line.route === '/runs' && line.status === 200),
  );
  t.truthy(requests.find((line) => line.method === 'POST' && line.route === '/runs' && line.status === 201));
  t.truthy(requests.find((line) => line.status === 401));
  const runRead = requests.find((line) => line.route === '/runs/:id' && line.runId === runId);
  t.is(runRead?.workflowId, runId);
  const states = lines.filter((line) => line.msg === 'run state' && line.runId === runId).map((line) => line.state);
  t.true(states.includes('succeeded'), JSON.stringify(states));
  t.true(
    lines.some((line) => line.component === 'temporal-sdk'),
    'the Temporal SDK logs through the same logger',
  );
});

test('a bad SVC_LOG_LEVEL stops start-up with a message naming it', async (t) => {
  const serve = spawnSvc(['serve'], {
    ...process.env,
    SVC_DATA_DIR: mkdtempSync(join(tmpdir(), 'svc-log-')),
    SVC_LOG_LEVEL: 'loud',
  });
  t.teardown(() => serve.child.kill('SIGKILL'));
  t.not(await serve.exited, 0);
  t.regex(serve.output(), /SVC_LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent, not "loud"/);
});
