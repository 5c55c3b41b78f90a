// A run's services on the container backend, for real: Podman serving the Docker Engine API, a
// service image built from the agent image (a small Node HTTP server), the shell agent. The agent
// reaches its service by name and prints its answer; a service that never gets ready fails the run
// `environment_services_failed` within its bound, with its name and last lines; a cancel while the
// run waits for one ends the run cancelled. After each run its services' containers are gone, and
// those a run's end could not remove (its engine did not answer) go with the reconciler's sweep.
import test from 'ava';
import { Client, Connection } from '@temporalio/client';
import { execFileSync } from 'node:child_process';
import { backendRuns } from '../support/backend-runs.ts';
import { waitUntilRemoved, type TestContainerEngine } from '../support/container-engine.ts';
import { startBackendForge, type BackendForge } from '../support/backend-forge.ts';
import { type forgeStack } from '../support/forge-stack.ts';
import { waitFor } from '../support/processes.ts';
import { SERVICE_IMAGE } from '../support/service-image.ts';
import { runEvents, runStdout, waitForRunState, type TestStack } from '../support/stack.ts';

let engine: TestContainerEngine;
let fixture: ReturnType<typeof forgeStack>;
let svc: TestStack;

let backend: BackendForge;

test.before(async () => {
  backend = await startBackendForge('container', {
    SVC_AGENT_IMAGES: 'localhost/svc-test-service:*',
    SVC_CONTAINER_UNREACHABLE_MS: '3000',
    SVC_RECONCILE_STALE_AFTER_MS: '1000',
  });
  ({ engine, fixture, svc } = backend);
});
test.after.always(() => backend?.stop());

// Services only: no setup runs, nothing is built or kept.
const repo = (name: string, services: string) => fixture.environmentRepo(name, `services:\n${services}`);
const register = (name: string) => fixture.register(name);
const dispatch = (project: string, prompt: string) => fixture.dispatch(project, prompt);
const terminalOf = async (runId: string) =>
  (await runEvents(svc, runId)).find((event) => event.payload?.type === 'result')?.payload;
const containersGone = async (runId: string, names: string[]) => {
  for (const name of [`svc-${runId}-services`, ...names.map((service) => `svc-${runId}-service-${service}`)])
    await waitUntilRemoved(engine.engine, name, 30_000);
};

test.serial('the agent reaches its service by name; the service is removed with the run', async (t) => {
  repo(
    'served',
    [
      '  - name: echo',
      `    image: ${SERVICE_IMAGE}`,
      '    env: {GREETING: hello-from-echo}',
      '    ports: [8080]',
      '',
    ].join('\n'),
  );
  const runId = await dispatch(await register('served'), 'curl -sS --max-time 5 http://echo:8080/');
  const run = await waitForRunState(svc, runId, ['succeeded', 'failed', 'cancelled'], 180_000);
  t.is(run.state, 'succeeded', JSON.stringify(await terminalOf(runId)));
  t.true((await runStdout(svc, runId)).includes('answer=hello-from-echo'));
  const events = await runEvents(svc, runId);
  const kinds = events.map((event) => event.kind);
  const ready = events.find((event) => event.kind === 'environment.service_ready');
  t.is(ready?.payload.name, 'echo');
  t.true(Number.isInteger(ready?.payload.durationMs) && ready?.payload.durationMs >= 0, JSON.stringify(ready));
  t.true(kinds.indexOf('environment.service_ready') < kinds.indexOf('sandbox.started'), 'ready before the agent');
  await containersGone(runId, ['echo']);
  t.pass();
});

test.serial('a service that never gets ready fails the run within its bound, with its name and lines', async (t) => {
  repo(
    'sleepy',
    [
      '  - name: sleepy',
      `    image: ${SERVICE_IMAGE}`,
      // It listens on 9090; the run waits for 8080.
      '    env: {PORT: "9090"}',
      '    ports: [8080]',
      '    readiness: {tcp: 8080, timeout: 3s}',
      '',
    ].join('\n'),
  );
  const runId = await dispatch(await register('sleepy'), 'echo the agent ran');
  const run = await waitForRunState(svc, runId, ['succeeded', 'failed', 'cancelled'], 180_000);
  t.like(run, { state: 'failed', failureReason: 'environment_services_failed' });
  const terminal = await terminalOf(runId);
  t.is(terminal?.service, 'sleepy');
  t.regex(terminal?.message, /^service sleepy was not ready within 3 s$/);
  t.true((terminal?.logs as string[]).includes('listening on 9090'), JSON.stringify(terminal));
  const events = await runEvents(svc, runId);
  t.false(events.some((event) => event.kind === 'sandbox.started' || event.kind === 'environment.service_ready'));
  await containersGone(runId, ['sleepy']);
  t.pass();
});

test.serial('a service that exits fails the run at once, saying how it exited', async (t) => {
  repo(
    'crashing',
    [
      '  - name: crashing',
      `    image: ${SERVICE_IMAGE}`,
      '    command: [node, -e, "console.log(\'no config\'); process.exit(3)"]',
      '    ports: [8080]',
      '    readiness: {timeout: 5m}',
      '',
    ].join('\n'),
  );
  const runId = await dispatch(await register('crashing'), 'echo the agent ran');
  const run = await waitForRunState(svc, runId, ['succeeded', 'failed', 'cancelled'], 180_000);
  t.like(run, { state: 'failed', failureReason: 'environment_services_failed' });
  const terminal = await terminalOf(runId);
  t.is(terminal?.message, 'service crashing exited with 3');
  t.deepEqual(terminal?.logs, ['no config']);
  await containersGone(runId, ['crashing']);
});

test.serial('a service whose command the image lacks fails the run at once, naming it', async (t) => {
  repo('unstartable', `  - name: unstartable\n    image: ${SERVICE_IMAGE}\n    command: [no-such-server]\n`);
  const runId = await dispatch(await register('unstartable'), 'echo the agent ran');
  const run = await waitForRunState(svc, runId, ['succeeded', 'failed', 'cancelled'], 180_000);
  t.like(run, { state: 'failed', failureReason: 'environment_services_failed' });
  // The engine's init starts, then cannot run the command: an exit, or the engine's refusal.
  t.regex((await terminalOf(runId))?.message, /^service unstartable(: | exited with \d+$)/);
  await containersGone(runId, ['unstartable']);
});

test.serial('a cancel while the run waits for its services ends it cancelled; they are removed', async (t) => {
  repo(
    'waiting',
    [
      '  - name: waiting',
      `    image: ${SERVICE_IMAGE}`,
      '    env: {PORT: "9090"}',
      '    ports: [8080]',
      '    readiness: {tcp: 8080, timeout: 10m}',
      '',
    ].join('\n'),
  );
  const runId = await dispatch(await register('waiting'), 'echo the agent ran');
  const name = `svc-${runId}-service-waiting`;
  await waitFor(async () => (await engine.engine.inspect(name))?.State.Running, 'the service running', 120_000);
  const labels = JSON.parse(execFileSync('podman', ['inspect', name], { encoding: 'utf8' }))[0].Config.Labels;
  t.is(labels['svc.sandbox'], `${runId}-service-waiting`, "the sweep's label");
  await svc.request('POST', `/runs/${runId}/cancel`, { body: { reason: 'no longer needed' } });
  const run = await waitForRunState(svc, runId, ['succeeded', 'failed', 'cancelled'], 60_000);
  t.is(run.state, 'cancelled');
  t.false((await runEvents(svc, runId)).some((event) => event.kind === 'sandbox.started'));
  await containersGone(runId, ['waiting']);
});

test.serial("services the run's end could not remove (the engine did not answer) go with the sweep", async (t) => {
  repo('orphaned', `  - name: orphan\n    image: ${SERVICE_IMAGE}\n    ports: [8080]\n`);
  const runId = await dispatch(await register('orphaned'), 'echo started\nsleep 120');
  const names = [`svc-${runId}`, `svc-${runId}-service-orphan`, `svc-${runId}-services`];
  t.teardown(() => {
    for (const name of names) execFileSync('podman', ['rm', '-f', name], { stdio: 'ignore' });
  });
  await waitForRunState(svc, runId, ['running'], 180_000);
  await engine.halt();
  t.is((await waitForRunState(svc, runId, undefined, 60_000)).failureReason, 'sandbox_unreachable');
  // The workflow has closed, its removal given up: only the sweep is left to remove them.
  const connection = await Connection.connect({ address: svc.stack.temporalAddress });
  try {
    await new Client({ connection }).workflow
      .getHandle(runId)
      .result()
      .catch(() => undefined);
  } finally {
    await connection.close();
  }
  await engine.restart();
  for (const name of names) t.truthy(await engine.engine.inspect(name), `${name} outlived its engine's API`);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  await backendRuns(() => svc).reconcilerPass();
  for (const name of names) await waitUntilRemoved(engine.engine, name, 30_000);
});
