// The container backend's boundary, as an Engine API create body: the agent image's read-only
// root, the run's workspace, home and /tmp writable, svc's in-sandbox programs and proxy sockets
// read-only, and nothing else of the host; no network but loopback (svc's proxies reach it over
// the bound sockets, as in a bubblewrap sandbox), every capability dropped, no_new_privs, the
// run's unprivileged host uid, a process limit. The same harness (init.mjs) runs first inside.
import { chmodSync, writeFileSync } from 'node:fs';
import { runShares } from '../../../core/environment-services.ts';
import { SANDBOX_PATHS } from '../bubblewrap.ts';
import type { ContainerCreateBody, ContainerSpec, SandboxLayout, SandboxLaunchRequest } from '../../spec.ts';

/** PATH inside the agent image (the CLIs live in /usr/local/bin). */
export const CONTAINER_PATH = '/usr/local/bin:/usr/local/sbin:/usr/bin:/usr/sbin:/bin:/sbin';
/** Where the harness finds the agent's stdin (the Engine API's attach is not needed for a file). */
const STDIN_PATH = '/run/svc/stdin';

/**
 * The most output the engine keeps of a container, per log file (Docker keeps two, Podman one): svc
 * follows the engine's log and keeps its own copy, so the engine's needs to hold only what svc has
 * not read yet. Unbounded, an agent printing without end fills the engine's disk.
 */
export const ENGINE_LOG_MAX_MIB = 16;

const bind = (source: string, target: string, writable = false) => `${source}:${target}:${writable ? 'rw' : 'ro'}`;

export function containerSandboxSpec({
  request,
  layout,
  command,
  env,
  stdinFile,
}: {
  request: SandboxLaunchRequest;
  layout: SandboxLayout;
  /** The harness and the agent's argv, as the image resolves them. */
  command: string[];
  env: Record<string, string>;
  /** Host file for the agent's stdin, or null when it has none. */
  stdinFile: string | null;
}): ContainerSpec {
  const binds = [
    ...layout.etcFiles.map((file) => bind(file.source, file.target)),
    bind(layout.workspace, SANDBOX_PATHS.workspace, true),
    bind(layout.home, SANDBOX_PATHS.home, true),
    bind(layout.tmp, SANDBOX_PATHS.tmp, true),
    ...layout.programs.map((program) => bind(program.source, program.target)),
    ...(layout.socketDir ? [bind(layout.socketDir, SANDBOX_PATHS.net)] : []),
    ...(layout.outbox ? [bind(layout.outbox, SANDBOX_PATHS.outbox, true)] : []),
    ...layout.binds.map((entry) => bind(entry.source, entry.target, entry.writable)),
  ];
  const environment = { ...env };
  if (stdinFile) {
    writeFileSync(stdinFile, request.launch.stdin ?? '');
    // Read by the agent's uid; it is the agent's own input.
    chmodSync(stdinFile, 0o644);
    binds.push(bind(stdinFile, STDIN_PATH));
    environment.SVC_INIT_STDIN = STDIN_PATH;
  }
  // The engine's init is the first process: the harness puts the agent in a group of its own, so
  // a stop reaches everything the agent started (as bubblewrap's supervisor does).
  environment.SVC_INIT_GROUP = '1';
  // svc as root gives each run a uid of its own; otherwise the engine maps svc's own (rootless).
  const id = request.hostId ?? process.getuid?.() ?? 1000;
  const { container } = request.settings;
  // A run with services shares its limits with them (core/environment-services.ts).
  const share = (limit: number | null) => runShares(limit, request.services?.names.length ?? 0).agent;
  return {
    engine: container.engine,
    name: `svc-${request.name}`,
    image: request.image || container.image,
    memoryLimitMiB: share(request.memoryLimitMiB ?? null),
    unreachableAfterMs: container.unreachableAfterMs,
    engineFacts: request.engineFacts ?? null,
    body: {
      Image: request.image || container.image,
      // svc's harness, whatever the image's own entry point.
      Entrypoint: command,
      Cmd: [],
      Env: Object.entries(environment).map(([name, value]) => `${name}=${value}`),
      User: `${id}:${id}`,
      WorkingDir: SANDBOX_PATHS.workspace,
      // The image gives files, not behaviour: svc decides how the container stops and is watched.
      StopSignal: 'SIGTERM',
      Healthcheck: { Test: ['NONE'] },
      Labels: { 'svc.sandbox': request.name },
      HostConfig: {
        // A run with services shares their loopback, which their holder keeps (container-services.ts).
        NetworkMode: request.services ? `container:svc-${request.services.holder}` : 'none',
        ...hardenedHostConfig({
          binds,
          tmpfs: {},
          maxProcesses: request.settings.maxProcesses,
          containerProcesses: share(request.settings.maxProcesses),
          cpuMillicores: share(request.cpuMillicores ?? null),
          runtime: container.runtime ?? null,
        }),
      },
    },
  };
}

/**
 * The walls of every container svc starts for a run (the agent's, its services'): no capability, no
 * privilege gained, a read-only image, svc's limits on processes, files and CPU, the engine's init.
 * `maxProcesses` is the run's: the process rlimit counts every process of the run's uid, in all its
 * containers; `containerProcesses` is this container's share of it.
 */
export function hardenedHostConfig(options: {
  binds: string[];
  tmpfs: Record<string, string>;
  maxProcesses: number;
  containerProcesses: number | null;
  cpuMillicores: number | null;
  runtime: string | null;
}): Omit<ContainerCreateBody['HostConfig'], 'NetworkMode'> {
  const limit = options.maxProcesses;
  return {
    CapDrop: ['ALL'],
    SecurityOpt: ['no-new-privileges'],
    ReadonlyRootfs: true,
    Binds: options.binds,
    Tmpfs: options.tmpfs,
    PidsLimit: options.containerProcesses ?? limit,
    // The engine's init (tini, catatonit) as the first process: a stop signal never meets a
    // process that ignores it for want of a handler, and zombies are reaped.
    Init: true,
    // Its own cgroup namespace, where the engine honours it (Podman 4.3's compat API does not).
    CgroupnsMode: 'private',
    // json-file (Podman: k8s-file) serves the follow svc reads; its size is capped.
    LogConfig: { Type: 'json-file', Config: { 'max-size': `${ENGINE_LOG_MAX_MIB}m`, 'max-file': '2' } },
    Ulimits: [
      { Name: 'nofile', Soft: 1024, Hard: 1024 },
      { Name: 'nproc', Soft: limit, Hard: limit },
    ],
    ...(options.cpuMillicores ? { NanoCpus: options.cpuMillicores * 1_000_000 } : {}),
    ...(options.runtime ? { Runtime: options.runtime } : {}),
  };
}
