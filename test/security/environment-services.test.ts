// A run's services (.svc/environment.yaml `services`) on the container backend are repository
// content, as hostile as the agent: a service gets no svc secret, no capability, no_new_privs and
// the run's unprivileged uid, like the agent's container; its only network is the run's own
// loopback (another run cannot reach it, by name or by port); and its image must be one the
// operator allows (SVC_AGENT_IMAGES), as a project's agentImage must.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { type TestContainerEngine } from '../support/container-engine.ts';
import { startBackendForge, type BackendForge } from '../support/backend-forge.ts';
import { type forgeStack } from '../support/forge-stack.ts';
import { waitFor } from '../support/processes.ts';
import { SERVICE_IMAGE } from '../support/service-image.ts';
import { runEvents, runStdout, waitForRunState, type TestStack } from '../support/stack.ts';

const FORGE_TOKEN = 'ghp_servicesforgetoken0123456789abcdefgh';
/** An image the engine holds but the operator never allowed projects (the agent image's own base). */
const FOREIGN_IMAGE = 'localhost/svc-agent-base:bookworm';
let engine: TestContainerEngine;
let fixture: ReturnType<typeof forgeStack>;
let svc: TestStack;

let backend: BackendForge;

test.before(async () => {
  backend = await startBackendForge('container', { SVC_AGENT_IMAGES: SERVICE_IMAGE, SVC_GIT_TOKEN: FORGE_TOKEN });
  ({ engine, fixture, svc } = backend);
});
test.after.always(() => backend?.stop());

const inspect = (name: string) => JSON.parse(execFileSync('podman', ['inspect', name], { encoding: 'utf8' }))[0];
const ended = (runId: string) => waitForRunState(svc, runId, ['succeeded', 'failed', 'cancelled'], 180_000);

test.serial(
  "a service has no secret, no capability, the run's uid, and only its run's loopback, out of another run's reach",
  async (t) => {
    fixture.environmentRepo(
      'guarded',
      [
        'setup: "true"',
        'services:',
        '  - name: guarded',
        `    image: ${SERVICE_IMAGE}`,
        '    env: {GREETING: hello}',
        '    ports: [8080]',
        '',
      ].join('\n'),
    );
    fixture.github.createRepo('acme', 'neighbour', { files: { 'README.md': 'a run without services\n' } });
    const owner = await fixture.dispatch(
      await fixture.register('guarded'),
      'curl -sS --max-time 5 http://guarded:8080/ && id -u && sleep 600',
    );
    await waitFor(
      async () => (await runStdout(svc, owner)).includes('answer=hello') || undefined,
      'the run reaching its service',
      180_000,
    );
    const service = inspect(`svc-${owner}-service-guarded`);
    const holder = inspect(`svc-${owner}-services`);
    const env: string[] = service.Config.Env;
    t.true(env.includes('GREETING=hello'));
    t.false(
      env.some((entry) => entry.includes(FORGE_TOKEN) || /^SVC_/.test(entry)),
      `no svc secret or setting: ${env.join(' ')}`,
    );
    t.is(service.HostConfig.NetworkMode, `container:${holder.Id}`, "the run's loopback, held by its holder");
    t.is(holder.HostConfig.NetworkMode, 'none');
    for (const config of [service, holder]) {
      t.true(config.HostConfig.SecurityOpt.some((option: string) => option.startsWith('no-new-privileges')));
      t.true(config.HostConfig.ReadonlyRootfs);
    }
    // The run's processes (1,024 by default) are shared: the agent keeps half, the service has the rest.
    const agent = inspect(`svc-${owner}`);
    t.is(agent.HostConfig.PidsLimit, 512);
    t.is(service.HostConfig.PidsLimit, 512);
    // What the service's own process reports of itself (its first lines).
    const lines = await engine.engine.logTail(`svc-${owner}-service-guarded`, 20);
    t.true(lines.includes('CapEff: 0000000000000000'), lines.join('\n'));
    t.true(lines.includes('NoNewPrivs: 1'), lines.join('\n'));
    const agentUid = (await runStdout(svc, owner)).find((line) => /^\d+$/.test(line));
    t.truthy(agentUid);
    t.not(agentUid, '0');
    t.true(lines.includes(`uid=${agentUid}`), "the service runs as the run's own uid");

    // Another run, meanwhile: nothing of the service by its port on loopback, nor by its name.
    const neighbour = await fixture.dispatch(
      await fixture.register('neighbour'),
      [
        'curl -sS --noproxy "*" --max-time 3 http://127.0.0.1:8080/ || echo no-port',
        'getent hosts guarded || echo no-name',
        'curl -fsS --max-time 5 http://guarded:8080/ || echo no-proxy-way',
      ].join('\n'),
    );
    t.is((await ended(neighbour)).state, 'succeeded');
    const seen = await runStdout(svc, neighbour);
    t.false(
      seen.some((line) => line.includes('answer=')),
      seen.join('\n'),
    );
    t.true(seen.includes('no-port') && seen.includes('no-name') && seen.includes('no-proxy-way'), seen.join('\n'));
    await svc.request('POST', `/runs/${owner}/cancel`, { body: { reason: 'checked' } });
    t.is((await ended(owner)).state, 'cancelled');
  },
);

test.serial('a service image the operator does not allow is refused; nothing starts', async (t) => {
  fixture.environmentRepo('foreign', `setup: "true"\nservices:\n  - name: db\n    image: ${FOREIGN_IMAGE}\n`);
  const runId = await fixture.dispatch(await fixture.register('foreign'), 'echo the agent ran');
  const run = await ended(runId);
  t.like(run, { state: 'failed', failureReason: 'environment_invalid' });
  const terminal = (await runEvents(svc, runId)).find((event) => event.payload?.type === 'result')?.payload;
  t.is(
    terminal?.message,
    `service db: image "${FOREIGN_IMAGE}" is not one of the images the operator allows (SVC_AGENT_IMAGES)`,
  );
  t.is(await engine.engine.inspect(`svc-${runId}-services`), null);
  t.is(await engine.engine.inspect(`svc-${runId}-service-db`), null);
});
