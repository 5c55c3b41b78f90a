// Restart survival of a plan-run: SIGKILL the API process, the worker process and the Temporal
// dev server while a child runs, start them again, and the plan-run completes with every child
// dispatched exactly once and the read model in step with the workflow. The coordinator's state
// lives only in Temporal: a worker that kept any of it in memory would lose it here.
import test from 'ava';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { loadTemporalDevSettings, startTemporalDev } from '../../stack/temporal-dev.ts';
import { DATABASE_LEGS, postgresOrSkip } from '../support/env.ts';
import { freePort } from '../support/free-port.ts';
import { planFixture, setSwitch } from '../support/plan-fixture.ts';
import { spawnSvc, waitFor, waitForOutput, type ChildHandle } from '../support/processes.ts';
import { request, testEnvironment } from '../support/stack.ts';

const TOKEN = 'plan-restart-operator-token';

for (const leg of DATABASE_LEGS) {
  test.serial(`${leg}: a plan-run survives SIGKILL of the API, the worker and Temporal mid-child`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    const fixture = await planFixture('acme', `restart-${leg}`);
    const settings = loadTemporalDevSettings();
    settings.port = await freePort();
    settings.ui.enabled = false;
    const temporalDir = mkdtempSync(join(tmpdir(), 'svc-temporal-'));
    let temporal = await startTemporalDev(temporalDir, settings);
    const port = await freePort();
    // API and worker are separate processes: the worker's agents reach the API at its fixed port.
    const environment = await testEnvironment({
      database: leg,
      temporalAddress: temporal.address,
      env: { ...fixture.env, SVC_API_TOKEN: TOKEN, SVC_PORT: String(port), SVC_API_URL: `http://127.0.0.1:${port}` },
    });
    const processes: ChildHandle[] = [];
    const start = async () => {
      const api = spawnSvc(['serve', '--no-worker'], environment.env);
      const worker = spawnSvc(['worker'], environment.env);
      processes.push(api, worker);
      const url = (await waitForOutput(api, /API: +(http:\/\/\S+)/, 60_000))[1]!;
      await waitForOutput(worker, /worker: polling/, 60_000);
      return { api, worker, url };
    };
    t.teardown(async () => {
      fixture.stopReviewer();
      for (const handle of processes) handle.child.kill('SIGKILL');
      await fixture.forge.stop();
      await temporal.stop();
      await environment.dropDatabase();
    });
    let { api, worker, url } = await start();
    const call = (method: string, path: string, body?: unknown) =>
      request(url, TOKEN, method, path, body === undefined ? undefined : { body });

    const project = (await call('POST', '/projects', { gitUrl: `https://github.com/acme/restart-${leg}` })).body.project
      .id;
    setSwitch(fixture, 'slow', fixture.seeds[1]!);
    const created = await call('POST', '/plan-runs', {
      project,
      agent: 'shell',
      planId: fixture.planId,
      promptTemplate: fixture.template,
    });
    t.is(created.status, 201, JSON.stringify(created.body));
    const id = created.body.planRun.id;
    let last: unknown;
    const midway = await waitFor<any>(
      async () => {
        const { body } = await call('GET', `/plan-runs/${id}`);
        last = body;
        return body.children?.[1]?.state === 'running' ? body : undefined;
      },
      'the second child to run',
      90_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}; last seen: ${JSON.stringify(last)}`);
    });
    t.is(midway.children[0].state, 'merged');

    // Everything at once, as a power cut would.
    api.child.kill('SIGKILL');
    worker.child.kill('SIGKILL');
    process.kill(-temporal.pid!, 'SIGKILL');
    await Promise.all([api.exited, worker.exited]);
    temporal = await startTemporalDev(temporalDir, settings);
    ({ api, worker, url } = await start());
    setSwitch(fixture, 'slow', fixture.seeds[1]!, false);

    const done = await waitFor(
      async () => {
        const { body } = await call('GET', `/plan-runs/${id}`);
        return ['succeeded', 'failed', 'cancelled'].includes(body.planRun?.state) ? body : undefined;
      },
      'the plan-run to finish',
      120_000,
    );
    t.is(done.planRun.state, 'succeeded', JSON.stringify(done.children));
    t.deepEqual(
      done.children.map((child: { state: string }) => child.state),
      ['merged', 'merged', 'merged'],
    );
    t.is(done.children[1].runId, midway.children[1].runId, 'the running child carried on: not dispatched again');

    // Exactly one run and one PR per seed, in the read model, on the forge and in Temporal.
    const runs = (await call('GET', `/runs?project=${project}`)).body.runs;
    t.is(runs.length, 3);
    t.deepEqual(runs.map((run: { seedId: string }) => run.seedId).sort(), [...fixture.seeds].sort());
    t.is(fixture.forge.pulls.length, 3);
    const connection = await Connection.connect({ address: temporal.address });
    t.teardown(() => connection.close());
    const client = new Client({ connection });
    const started = [];
    for await (const workflow of client.workflow.list({
      query: `WorkflowType = 'runWorkflow' AND SvcProjectId = '${project}'`,
    }))
      started.push(workflow.workflowId);
    t.is(started.length, 3);
    // The read model agrees with the workflow's own account.
    const outcome = await client.workflow.getHandle(id).result();
    t.deepEqual(
      outcome.children.map((child: { runId: string; state: string }) => [child.runId, child.state]),
      done.children.map((child: { runId: string; state: string }) => [child.runId, child.state]),
    );
  });
}
