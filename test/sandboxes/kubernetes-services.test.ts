// A repository's services on the Kubernetes backend (the stand-in API running each pod's containers
// on Podman, in one network namespace): the services are containers of the run's pod, the agent
// reaches one by name, and one never ready fails the run before the agent starts, with its name and
// last lines. The pod carries
// them under the agent's hardening (test/security/environment-services.test.ts checks the manifest).
import test from 'ava';
import { waitUntilRemoved, type TestContainerEngine } from '../support/container-engine.ts';
import { startBackendForge, type BackendForge } from '../support/backend-forge.ts';
import { type forgeStack } from '../support/forge-stack.ts';
import { type KubeStandIn } from '../support/kube-stand-in.ts';
import { waitFor } from '../support/processes.ts';
import { SERVICE_IMAGE } from '../support/service-image.ts';
import { runEvents, runStdout, waitForRunState, type TestStack } from '../support/stack.ts';

let engine: TestContainerEngine;
let kube: KubeStandIn;
let svc: TestStack;
let fixture: ReturnType<typeof forgeStack>;

let backend: BackendForge;

test.before(async () => {
  backend = await startBackendForge('kubernetes', { SVC_AGENT_IMAGES: 'localhost/svc-test-service:*' });
  ({ engine, fixture, svc } = backend);
  kube = backend.kube!;
});
test.after.always(() => backend?.stop());

const podOf = (runId: string) => `svc-${runId.replace('_', '-')}`;
const repo = (name: string, services: string[]) =>
  fixture.environmentRepo(name, ['services:', ...services, ''].join('\n'));
const ended = async (runId: string) => {
  const run = await waitForRunState(svc, runId, ['succeeded', 'failed', 'cancelled'], 180_000);
  return { run, trace: JSON.stringify(await runEvents(svc, runId)).slice(-3000) };
};

test.serial('the agent reaches its service by name in its own pod; the service goes with the pod', async (t) => {
  repo('served', [
    '  - name: echo',
    `    image: ${SERVICE_IMAGE}`,
    '    env: {GREETING: hello-from-echo}',
    '    ports: [8080]',
  ]);
  const runId = await fixture.dispatch(await fixture.register('served'), 'curl -sS --max-time 5 http://echo:8080/');
  const { run, trace } = await ended(runId);
  t.is(run.state, 'succeeded', trace);
  t.true((await runStdout(svc, runId)).includes('answer=hello-from-echo'), trace);
  const manifest = kube.created.find((pod) => pod.metadata!.name === podOf(runId))!;
  t.deepEqual(
    manifest.spec!.containers.map((container) => container.name),
    ['agent', 'service-echo'],
  );
  t.deepEqual(manifest.spec!.hostAliases, [{ ip: '127.0.0.1', hostnames: ['echo'] }]);
  t.like((await runEvents(svc, runId)).find((event) => event.kind === 'sandbox.started')?.payload, {
    isolation: 'kubernetes',
  });
  // svc deletes the pod once its agent has ended; the service's container goes with it.
  await waitFor(async () => !kube.pods.has(podOf(runId)), 'the pod deleted', 30_000);
  await waitUntilRemoved(engine.engine, `kube-${podOf(runId)}-service-echo`);
});

test.serial('a service never ready fails the run environment_services_failed; the agent never runs', async (t) => {
  repo('sleepy', [
    '  - name: sleepy',
    `    image: ${SERVICE_IMAGE}`,
    // It listens on 9090; the run waits for 8080.
    '    env: {PORT: "9090"}',
    '    ports: [8080]',
    '    readiness: {tcp: 8080, timeout: 3s}',
  ]);
  const runId = await fixture.dispatch(await fixture.register('sleepy'), 'echo the agent ran');
  const { run, trace } = await ended(runId);
  t.like(run, { state: 'failed', failureReason: 'environment_services_failed' }, trace);
  t.false((await runStdout(svc, runId)).includes('the agent ran'));
  t.true(trace.includes('service sleepy was not ready within 3 s'), trace);
  // As on the container backend: the failure names the service, says why, and has its last lines.
  const result = (await runEvents(svc, runId)).find((event) => event.payload?.type === 'result')?.payload;
  t.is(result?.service, 'sleepy', trace);
  t.is(result?.message, 'service sleepy was not ready within 3 s');
  t.true((result?.logs as string[]).includes('listening on 9090'), JSON.stringify(result));
});

test.serial("the harness's line printed by an agent names no service of its pod: no lines are read", async (t) => {
  repo('mimic', ['  - name: real', `    image: ${SERVICE_IMAGE}`, '    ports: [8080]']);
  const runId = await fixture.dispatch(
    await fixture.register('mimic'),
    "echo 'svc sandbox: service other was not ready within 1 s' >&2; exit 125",
  );
  const { run, trace } = await ended(runId);
  // The agent mislabels only its own failure; svc reads no container the pod does not have.
  t.like(run, { state: 'failed', failureReason: 'environment_services_failed' }, trace);
  const result = (await runEvents(svc, runId)).find((event) => event.payload?.type === 'result')?.payload;
  t.is(result?.service, undefined, JSON.stringify(result));
  t.is(result?.logs, undefined);
});

test.serial('a readiness command is refused on Kubernetes before any pod is made', async (t) => {
  repo('commanded', [
    '  - name: checked',
    `    image: ${SERVICE_IMAGE}`,
    '    readiness: {command: [node, -e, "process.exit(0)"]}',
  ]);
  const runId = await fixture.dispatch(await fixture.register('commanded'), 'echo the agent ran');
  const { run, trace } = await ended(runId);
  t.like(run, { state: 'failed', failureReason: 'environment_invalid' }, trace);
  t.true(trace.includes('a readiness command is not supported on Kubernetes (use tcp)'), trace);
  t.false(kube.created.some((pod) => pod.metadata!.name === podOf(runId)));
});
