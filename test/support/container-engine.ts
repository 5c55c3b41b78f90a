// A real container engine for the container backend's tests: `podman system service` on a socket
// of the test's own, serving the Docker Engine API, with the agent image scripts/test built.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DockerEngine } from '../../activities/sandbox/container/docker-engine.ts';
import { DEFAULT_AGENT_IMAGE } from '../../platform/sandbox-settings.ts';
import { waitFor } from './processes.ts';

export interface TestContainerEngine {
  address: string;
  engine: DockerEngine;
  /** What a stack needs to run its agents in containers here. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

const CONTAINERS_CONF = resolve('activities/sandbox/container/image/containers.conf');

export async function startContainerEngine(): Promise<TestContainerEngine> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-podman-'));
  const address = `unix://${join(dir, 'podman.sock')}`;
  const service = spawn('podman', ['system', 'service', '--time=0', address], {
    env: { ...process.env, CONTAINERS_CONF },
    // conmon leaves an `oom` marker in its working directory when a container is OOM-killed.
    cwd: dir,
    stdio: 'ignore',
  });
  const engine = new DockerEngine(address);
  await waitFor(
    () =>
      engine.ping().then(
        () => true,
        () => false,
      ),
    'the podman API service',
    30_000,
  );
  if (!(await engine.imageExists(DEFAULT_AGENT_IMAGE)))
    throw new Error(`${DEFAULT_AGENT_IMAGE} is missing: scripts/test builds it (scripts/build-agent-image)`);
  return {
    address,
    engine,
    env: { SVC_SANDBOX: 'container', SVC_CONTAINER_ENGINE: address, SVC_CONTAINER_RUNTIME: 'runc' },
    async stop() {
      if (service.exitCode !== null || service.signalCode !== null) return;
      service.kill('SIGTERM');
      await new Promise((done) => (service.exitCode === null ? service.once('exit', done) : done(null)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
