// The supervisor's half of the container backend: create the run's container (or find the one a
// previous supervisor made), start it, copy its output into the sandbox's log files, wait for it
// to end, and say how it ended. The supervisor keeps its file contract, so the activities watch a
// container exactly as they watch a bubblewrap sandbox.
import { writeSync } from 'node:fs';
import { Writable } from 'node:stream';
import { processStartTime } from '../../../platform/processes.ts';
import type { AgentRecord, ExitRecord } from '../files.ts';
import { memoryLimitWasHit, type MemoryCgroup } from '../memory-cgroup.ts';
import { DockerEngine, EngineError } from './docker-engine.ts';
import type { ContainerSpec } from './container-launch.ts';

/** Seconds between SIGTERM and SIGKILL when svc stops a container. */
const STOP_GRACE_SECONDS = 5;
/** How long the output may take to drain once the container has exited. */
const LOG_DRAIN_MS = 3000;

export interface ContainerRun {
  /** Resolves with the container's exit once it has ended (its output copied). */
  exited: Promise<Omit<ExitRecord, 'stoppedBySvc'>>;
  stop(): void;
}

function fdSink(fd: number): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, done) {
      writeSync(fd, chunk);
      done();
    },
  });
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
  output: { stdoutFd: number; stderrFd: number },
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
    const logs = engine.followLogs(containerId, fdSink(output.stdoutFd), fdSink(output.stderrFd));
    // A follow cut short (the engine restarting) is no reason to lose the run: the wait decides.
    const copied = logs.done.catch(() => {});
    const ended = await waitForExit(engine, containerId, spec.unreachableAfterMs);
    if (ended.loss) {
      logs.stop();
      return { exitCode: null, signal: null, spawnError: null, loss: ended.loss, endedAt: new Date().toISOString() };
    }
    const { exitCode } = ended;
    // The last lines arrive just after the exit; a follow the engine keeps open is cut after a while.
    const drained = setTimeout(() => logs.stop(), LOG_DRAIN_MS);
    await copied;
    clearTimeout(drained);
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
    try {
      let exitCode: number | null = null;
      try {
        exitCode = await engine.wait(id);
      } catch (error) {
        // An answer (an engine shutting down answers too) is checked below; no answer is unreachable.
        if (!(error instanceof EngineError)) throw error;
      }
      const state = await engine.inspect(id);
      if (!state) return { loss: 'vanished' };
      if (!state.State.Running) return { exitCode: exitCode ?? state.State.ExitCode };
      unansweredSince = null;
    } catch {
      unansweredSince ??= Date.now();
      if (Date.now() - unansweredSince > unreachableAfterMs) return { loss: 'unreachable' };
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

/** Creates the container, or finds the one of that name a previous supervisor created. */
async function createOrFind(engine: DockerEngine, name: string, body: ContainerSpec['body']): Promise<string> {
  try {
    return await engine.create(name, body);
  } catch (error) {
    if (!(error instanceof EngineError && error.status === 409)) throw error;
    const existing = await engine.inspect(name);
    if (!existing) throw error;
    return existing.Id;
  }
}
