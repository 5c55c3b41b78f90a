// A run's services on the container backend (`services` in .svc/environment.yaml,
// core/environment-services.ts): a holder container keeps the run's network namespace (loopback
// only, no interface to anywhere), each service runs in it under the agent container's hardening
// (the run's unprivileged uid, every capability dropped, no_new_privs, svc's seccomp profile, a
// read-only root, the run's memory cgroup, CPU and process limits), and the agent's container
// joins it later (container-launch.ts): the services are on the agent's loopback, by name through
// /etc/hosts. Every container carries the `svc.sandbox` label (`<run>-services`,
// `<run>-service-<name>`), so the sweep removes it with its run.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  runShares,
  SERVICE_FAILURE_LOG_LINES,
  serviceFailureLines,
  type ServicePlan,
} from '../../../core/environment-services.ts';
import { sandboxEtc } from '../bubblewrap.ts';
import { hardenedHostConfig } from './container-launch.ts';
import { limitContainer } from './container-runner.ts';
import { DockerEngine } from './docker-engine.ts';
import { engineFacts } from './engine-facts.ts';
import type { ContainerCreateBody, MemoryCgroup, SandboxServices, ServiceCreateBody } from '../../spec.ts';

/** The sandbox name of the run's holder, and of one of its services (`svc-` makes the container's). */
export const servicesHolder = (runId: string) => `${runId}-services`;
export const serviceSandbox = (runId: string, name: string) => `${runId}-service-${name}`;

/** What the agent's launch needs of the run's services. */
export const sandboxServices = (runId: string, services: ServicePlan[]): SandboxServices => ({
  holder: servicesHolder(runId),
  names: services.map((service) => service.name),
  ports: services.flatMap((service) => service.ports),
  plans: services,
});

/** A service's /tmp (and each volume its image declares): memory, counted in the run's limit. */
const TMPFS = 'rw,nosuid,nodev,size=256m,mode=1777';
/** How long one readiness probe may take. */
const PROBE_TIMEOUT_MS = 5000;

export interface ServicesLaunch {
  engine: string;
  runId: string;
  /** The run's image: the holder runs its Node (every agent image has one: svc's harness needs it). */
  image: string;
  /** The run's host uid (svc is root), as the agent's container has it. */
  hostId: number | null;
  maxProcesses: number;
  cpuMillicores: number | null;
  memoryLimitMiB: number | null;
  memoryCgroup: MemoryCgroup | null;
  runtime: string | null;
  /** The run's sandbox directory: the services' /etc/hosts is written there. */
  dir: string;
}

/**
 * Creates and starts the holder and each service; a container that exists already (a retried
 * activity) is started if it is not running, never made twice. Throws with a message the run's
 * failure can show.
 */
export async function startServices(launch: ServicesLaunch, services: ServicePlan[]): Promise<void> {
  const engine = new DockerEngine(launch.engine);
  const facts = await engineFacts(launch.engine);
  const id = launch.hostId ?? process.getuid?.() ?? 1000;
  mkdirSync(launch.dir, { recursive: true, mode: 0o755 });
  const hosts = join(launch.dir, 'services-hosts');
  writeFileSync(
    hosts,
    sandboxEtc(
      id,
      services.map((service) => service.name),
    ).hosts,
  );
  // Read by the services' uid.
  chmodSync(hosts, 0o644);
  // Each service's share of the run's limits (the agent keeps half: container-launch.ts).
  const share = (limit: number | null) => runShares(limit, services.length).service;
  const host = (networkMode: ContainerCreateBody['HostConfig']['NetworkMode'], tmpfs: Record<string, string>) => {
    const config: ContainerCreateBody['HostConfig'] = {
      NetworkMode: networkMode,
      ...hardenedHostConfig({
        binds: [`${hosts}:/etc/hosts:ro`],
        tmpfs,
        maxProcesses: launch.maxProcesses,
        containerProcesses: share(launch.maxProcesses),
        cpuMillicores: share(launch.cpuMillicores),
        runtime: launch.runtime,
      }),
    };
    limitContainer(config, facts, launch.memoryCgroup, share(launch.memoryLimitMiB));
    return config;
  };
  const holder = servicesHolder(launch.runId);
  await ensureStarted(engine, `svc-${holder}`, {
    Image: launch.image,
    // Holds the namespace and does nothing else.
    Entrypoint: ['node', '-e', 'setInterval(() => {}, 2 ** 30)'],
    Cmd: [],
    Env: [],
    User: `${id}:${id}`,
    WorkingDir: '/',
    StopSignal: 'SIGTERM',
    Healthcheck: { Test: ['NONE'] },
    Labels: { 'svc.sandbox': holder },
    HostConfig: host('none', {}),
  });
  for (const service of services) {
    const name = `svc-${serviceSandbox(launch.runId, service.name)}`;
    const image = await engine.inspectImage(service.image);
    if (!image) throw new Error(`service ${service.name}: the engine has no image ${service.image}`);
    // The image's volumes would be the engine's disk: each is memory of the run's instead.
    const volumes = Object.keys(image.Config?.Volumes ?? {}).filter((path) => path.startsWith('/'));
    const env = { HOME: '/tmp', ...service.env };
    const started = ensureStarted(engine, name, {
      Image: service.image,
      ...(service.command ? { Cmd: service.command } : {}),
      Env: Object.entries(env).map(([key, value]) => `${key}=${value}`),
      User: `${id}:${id}`,
      StopSignal: 'SIGTERM',
      Healthcheck: { Test: ['NONE'] },
      Labels: { 'svc.sandbox': serviceSandbox(launch.runId, service.name) },
      HostConfig: host(
        `container:svc-${holder}`,
        Object.fromEntries(['/tmp', ...volumes].map((path) => [path, TMPFS])),
      ),
    });
    // The engine's refusal (a command the image lacks, say), named by the service it is about.
    await started.catch((error: Error) => {
      throw new Error(`service ${service.name}: ${error.message}`);
    });
  }
}

async function ensureStarted(engine: DockerEngine, name: string, body: ContainerCreateBody | ServiceCreateBody) {
  const found = await engine.inspect(name);
  const id = found?.Id ?? (await engine.create(name, body));
  if (!found?.State.Running) await engine.start(id);
}

export type ServiceState = { ready: true; startedAt: string } | { ready: false; exited: number | null } | null;

/**
 * Whether a service is ready: its container runs and its readiness check passes (a TCP connect on
 * the shared loopback, from the holder's Node; or its command, in the service's container). Null
 * while it is not ready yet; `exited` once it has stopped (it never will be).
 */
export async function probeService(address: string, runId: string, service: ServicePlan): Promise<ServiceState> {
  const engine = new DockerEngine(address);
  const name = `svc-${serviceSandbox(runId, service.name)}`;
  const seen = await engine.inspect(name);
  if (!seen) return { ready: false, exited: null };
  if (!seen.State.Running)
    return seen.State.Status === 'created' ? null : { ready: false, exited: seen.State.ExitCode };
  const { readiness } = service;
  if (readiness === null) return { ready: true, startedAt: seen.State.StartedAt };
  const code =
    'tcp' in readiness
      ? await engine.exec(`svc-${servicesHolder(runId)}`, tcpProbe(readiness.tcp), PROBE_TIMEOUT_MS)
      : await engine.exec(name, readiness.command, PROBE_TIMEOUT_MS);
  return code === 0 ? { ready: true, startedAt: seen.State.StartedAt } : null;
}

const tcpProbe = (port: number) => [
  'node',
  '-e',
  `const s = require('node:net').connect(${port}, '127.0.0.1');` +
    "s.on('connect', () => process.exit(0)); s.on('error', () => process.exit(1));",
];

/** When a service's container started (its readiness bound counts from there), or null when it has not. */
export async function serviceStartedAt(address: string, runId: string, name: string): Promise<number | null> {
  const seen = await new DockerEngine(address).inspect(`svc-${serviceSandbox(runId, name)}`).catch(() => null);
  const at = Date.parse(seen?.State.StartedAt ?? '');
  return Number.isNaN(at) || at <= 0 ? null : at;
}

/** A service's last lines, for the run's failure. */
export async function serviceLogTail(address: string, runId: string, name: string) {
  const engine = new DockerEngine(address);
  const tail = await engine.logTail(`svc-${serviceSandbox(runId, name)}`, SERVICE_FAILURE_LOG_LINES).catch(() => []);
  return serviceFailureLines(tail);
}

/** Removes the run's services and their holder (each gone already is fine). */
export async function removeServices(engineAddress: string, runId: string, names: string[]): Promise<void> {
  const engine = new DockerEngine(engineAddress);
  for (const name of names) await engine.remove(`svc-${serviceSandbox(runId, name)}`);
  await engine.remove(`svc-${servicesHolder(runId)}`);
}
