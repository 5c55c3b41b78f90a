// The supervisor's half of the container backend: create the run's container (or find the one a
// previous supervisor made), start it, copy its output into the sandbox's log files, wait for it
// to end, and say how it ended. The supervisor keeps its file contract, so the activities watch a
// container exactly as they watch a bubblewrap sandbox.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { processStartTime } from '../../../platform/processes.ts';
import type { AgentRecord, ExitRecord } from '../files.ts';
import { memoryLimitWasHit, type MemoryCgroup } from '../memory-cgroup.ts';
import { DockerEngine } from './docker-engine.ts';
import { copyContainerOutput } from './container-output.ts';
import type { ContainerSpec } from './container-launch.ts';

const SECCOMP_PROFILE = join(dirname(fileURLToPath(import.meta.url)), 'image', 'seccomp.json');

/** Seconds between SIGTERM and SIGKILL when svc stops a container. */
const STOP_GRACE_SECONDS = 5;

export interface ContainerRun {
  /** Resolves with the container's exit once it has ended (its output copied). */
  exited: Promise<Omit<ExitRecord, 'stoppedBySvc'>>;
  stop(): void;
}

/** The cgroup parent an engine with the cgroupfs manager takes: the path under the controller's root. */
function cgroupParent(cgroup: MemoryCgroup): string {
  return cgroup.path.replace(cgroup.version === 1 ? /^\/sys\/fs\/cgroup\/memory/ : /^\/sys\/fs\/cgroup/, '') || '/';
}

/**
 * Runs the sandbox's container. `onSpawn` is called once the agent's container is running;
 * a spawn failure (no image, a refused create) resolves `exited` with a spawnError.
 */
export function runContainer(
  spec: ContainerSpec,
  memoryCgroup: MemoryCgroup | null | undefined,
  output: { stdoutFd: number; stderrFd: number; cursorFile: string },
  onSpawn: (record: AgentRecord) => void,
): ContainerRun {
  const engine = new DockerEngine(spec.engine);
  let containerId: string | null = null;
  let stopRequested = false;
  const body = structuredClone(spec.body);
  // The run's memory cgroup holds the limit (and the OOM evidence, which outlives the container).
  if (memoryCgroup) body.HostConfig.CgroupParent = cgroupParent(memoryCgroup);
  else if (spec.memoryLimitMiB) {
    body.HostConfig.Memory = spec.memoryLimitMiB * 1024 * 1024;
    body.HostConfig.MemorySwap = body.HostConfig.Memory;
  }

  const exited = (async (): Promise<Omit<ExitRecord, 'stoppedBySvc'>> => {
    try {
      // svc's seccomp profile: the engine's default without namespace creation (no nested user namespace).
      body.HostConfig.SecurityOpt.push(
        `seccomp=${(await engine.isPodman()) ? SECCOMP_PROFILE : readFileSync(SECCOMP_PROFILE, 'utf8')}`,
      );
      containerId = await createOrFind(engine, spec.name, body);
    } catch (error) {
      return {
        exitCode: null,
        signal: null,
        spawnError: {
          code: 'CONTAINER_CREATE',
          message: `the container could not be created: ${(error as Error).message}`,
        },
        endedAt: new Date().toISOString(),
      };
    }
    let state = (await engine.inspect(containerId))?.State;
    if (state && !state.Running && state.Status === 'created') {
      try {
        await engine.start(containerId);
      } catch (error) {
        await engine.remove(containerId).catch(() => {});
        return {
          exitCode: null,
          signal: null,
          spawnError: {
            code: 'CONTAINER_START',
            message: `the container could not start: ${(error as Error).message}`,
          },
          endedAt: new Date().toISOString(),
        };
      }
      state = (await engine.inspect(containerId))?.State;
    }
    onSpawn({
      pid: state?.Pid ?? 0,
      startTime: state?.Pid ? (processStartTime(state.Pid) ?? null) : null,
      spawnedAt: new Date().toISOString(),
      containerId,
    });
    if (stopRequested) await engine.stop(containerId, STOP_GRACE_SECONDS).catch(() => {});
    const logs = copyContainerOutput(engine, containerId, output);
    const ended = await waitForExit(engine, containerId, spec.unreachableAfterMs);
    if (ended.loss) {
      logs.stop();
      return { exitCode: null, signal: null, spawnError: null, loss: ended.loss, endedAt: new Date().toISOString() };
    }
    const { exitCode } = ended;
    await logs.drain();
    const final = (await engine.inspect(containerId).catch(() => null))?.State;
    const oomKilled =
      final?.OOMKilled === true ||
      (exitCode === 137 && !stopRequested && memoryCgroup ? memoryLimitWasHit(memoryCgroup) : false);
    await engine.remove(containerId).catch(() => {});
    return { exitCode, signal: null, spawnError: null, oomKilled, endedAt: new Date().toISOString() };
  })();

  return {
    exited,
    stop() {
      stopRequested = true;
      if (containerId) void engine.stop(containerId, STOP_GRACE_SECONDS).catch(() => {});
    },
  };
}

/**
 * Waits for the container to end. The engine may restart under it (a wait is just an HTTP request):
 * then it waits again. A container that disappears (removed behind svc's back, its host gone) is
 * `vanished`; an engine that does not answer for `unreachableAfterMs` is `unreachable`.
 */
async function waitForExit(
  engine: DockerEngine,
  id: string,
  unreachableAfterMs: number,
): Promise<{ exitCode: number; loss?: undefined } | { loss: 'vanished' | 'unreachable' }> {
  let unansweredSince: number | null = null;
  for (;;) {
    let exitCode: number | null = null;
    let waitFailed = false;
    try {
      exitCode = await engine.wait(id);
    } catch {
      // Whether the container is gone, still running or its engine unreachable, inspect decides.
      waitFailed = true;
    }
    let state: Awaited<ReturnType<DockerEngine['inspect']>>;
    try {
      state = await engine.inspect(id);
    } catch {
      unansweredSince ??= Date.now();
      if (Date.now() - unansweredSince > unreachableAfterMs) return { loss: 'unreachable' };
      await new Promise((resolve) => setTimeout(resolve, 1000));
      continue;
    }
    unansweredSince = null;
    if (!state) return { loss: 'vanished' };
    if (!state.State.Running) return { exitCode: exitCode ?? state.State.ExitCode };
    if (waitFailed) await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/**
 * Finds the sandbox's container (a previous supervisor's), or creates it. A create that loses a
 * race finds the winner's (Docker answers 409 for a name in use, Podman 500: the name decides).
 */
async function createOrFind(engine: DockerEngine, name: string, body: ContainerSpec['body']): Promise<string> {
  const existing = await engine.inspect(name);
  if (existing) return existing.Id;
  try {
    return await engine.create(name, body);
  } catch (error) {
    const winner = await engine.inspect(name);
    if (!winner) throw error;
    return winner.Id;
  }
}
