// A real container engine for the container backend's tests: `podman system service` on a socket
// of the test's own, serving the Docker Engine API, with the agent image scripts/test built.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DockerEngine } from '../../sandbox/backends/container/docker-engine.ts';
import { DEFAULT_AGENT_IMAGE } from '../../platform/sandbox-settings.ts';
import { waitFor } from './processes.ts';

export interface TestContainerEngine {
  address: string;
  engine: DockerEngine;
  /** What a stack needs to run its agents in containers here. */
  env: Record<string, string>;
  /** Stops the API service (the containers run on, under conmon). */
  halt(): Promise<void>;
  /** Stops the API service and starts it again on the same socket. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const CONTAINERS_CONF = resolve('sandbox/backends/container/image/containers.conf');

/** Waits until the engine no longer has the container (Podman may answer 500 while it removes one). */
export async function waitUntilRemoved(engine: DockerEngine, name: string, timeoutMs = 30_000): Promise<void> {
  await waitFor(async () => (await engine.inspect(name).catch(() => undefined)) === null, `${name} removed`, timeoutMs);
}

export async function startContainerEngine(): Promise<TestContainerEngine> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-podman-'));
  const address = `unix://${join(dir, 'podman.sock')}`;
  const engine = new DockerEngine(address);
  const launch = async () => {
    const child = spawn('podman', ['system', 'service', '--time=0', address], {
      env: { ...process.env, CONTAINERS_CONF },
      // conmon leaves an `oom` marker in its working directory when a container is OOM-killed.
      cwd: dir,
      stdio: 'ignore',
    });
    const answers = () =>
      engine.ping().then(
        () => true,
        () => false,
      );
    await waitFor(answers, 'the podman API service', 30_000);
    return child;
  };
  const halt = async (child: ChildProcess) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await new Promise((done) => child.once('exit', done));
  };
  let service = await launch();
  if (!(await engine.imageExists(DEFAULT_AGENT_IMAGE)))
    throw new Error(`${DEFAULT_AGENT_IMAGE} is missing: scripts/test builds it (scripts/build-agent-image)`);
  return {
    address,
    engine,
    env: { SVC_SANDBOX: 'container', SVC_CONTAINER_ENGINE: address, SVC_CONTAINER_RUNTIME: 'runc' },
    async halt() {
      await halt(service);
    },
    async restart() {
      await halt(service);
      service = await launch();
    },
    async stop() {
      await halt(service);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
