// A standalone `svc worker` serves its own svc_* metrics (SVC_WORKER_METRICS_ADDRESS): the run
// histograms it observes are scraped there, behind the operator token, not on the API's /metrics.
import test from 'ava';
import { freePort } from '../support/free-port.ts';
import { spawnSvc, waitForOutput } from '../support/processes.ts';
import { startTestStack, waitForRunState } from '../support/stack.ts';

test('a standalone worker serves its own metrics, operators only', async (t) => {
  const svc = await startTestStack({ worker: false });
  t.teardown(() => svc.stop());
  const address = `127.0.0.1:${await freePort()}`;
  const worker = spawnSvc(['worker'], {
    ...process.env,
    SVC_DATA_DIR: svc.config.dataDir,
    DATABASE_URL: svc.config.databaseUrl,
    TEMPORAL_ADDRESS: svc.stack.temporalAddress,
    SVC_TASK_QUEUE: svc.config.taskQueue,
    SVC_API_TOKEN: svc.token,
    SVC_API_URL: svc.url,
    SVC_WORKER_METRICS_ADDRESS: address,
  });
  t.teardown(() => worker.child.kill('SIGKILL'));
  const url = (await waitForOutput(worker, /worker metrics: (http:\/\/\S+)/, 60_000))[1]!;
  t.is(url, `http://${address}/metrics`);

  const runId = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo from the worker' } })).body
    .run.id;
  t.is((await waitForRunState(svc, runId)).state, 'succeeded');

  t.is((await fetch(url)).status, 401);
  t.is((await fetch(url, { headers: { authorization: 'Bearer not-the-token' } })).status, 401);
  const scraped = await fetch(url, { headers: { authorization: `Bearer ${svc.token}` } });
  t.is(scraped.status, 200);
  const text = await scraped.text();
  const count = (name: string) => Number(new RegExp(`^${name}_count(?:\\{[^}]*\\})? (\\d+)$`, 'm').exec(text)?.[1]);
  t.is(count('svc_sandbox_ready_seconds'), 1);
  t.is(count('svc_agent_first_output_seconds'), 1);
  t.is(count('svc_run_queue_wait_seconds'), 1);
  t.regex(text, /^svc_run_duration_seconds_count\{state="succeeded"\} 1$/m);
  // The API process observed none of it: each process exposes its own.
  t.notRegex((await svc.request('GET', '/metrics')).text, /^svc_sandbox_ready_seconds_count [1-9]/m);
  worker.child.kill('SIGTERM');
  t.is(await worker.exited, 0);
});
