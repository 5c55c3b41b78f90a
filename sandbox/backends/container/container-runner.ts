// The supervisor's half of the container backend: create the run's container (a supervisor that
// takes over only finds it), start it, copy its output into the sandbox's log files, wait for it
// to end, and say how it ended. The supervisor keeps its file contract, so the activities watch a
// container exactly as they watch a bubblewrap sandbox.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { processStartTime } from '../../../platform/processes.ts';
import { startFailure } from '../../host/files.ts';
import { memoryLimitWasHit } from '../../host/memory-cgroup.ts';
import { DockerEngine, EngineError } from './docker-engine.ts';
import { copyContainerOutput, type OutputFiles } from './container-output.ts';
import { waitForExit } from './container-wait.ts';
import { askEngineFacts } from './engine-facts.ts';
import type {
  AgentRecord,
  BackendExit,
  MemoryCgroup,
  ContainerCreateBody,
  ContainerSpec,
  EngineFacts,
} from '../../spec.ts';

const SECCOMP_PROFILE = join(dirname(fileURLToPath(import.meta.url)), 'image', 'seccomp.json');

/** How long a container killed by someone else has to disappear before its kill counts as a death. */
const REMOVAL_SETTLE_MS = 1000;
/** Seconds between SIGTERM and SIGKILL when svc stops a container. */
const STOP_GRACE_SECONDS = 5;

type Exit = BackendExit;

export interface ContainerRun {
  /** Resolves with the container's exit once it has ended (its output copied). */
  exited: Promise<Exit>;
  stop(): void;
  /** Removes the container, once its exit is recorded. */
  remove(): Promise<void>;
}

const lost = (loss: 'vanished' | 'unreachable'): Exit => ({
  exitCode: null,
  signal: null,
  spawnError: null,
  loss,
  endedAt: new Date().toISOString(),
});

/**
 * What the engine is asked for beyond the launch: the memory limit (through the run's cgroup where
 * the engine manages cgroupfs paths, else the engine's own), svc's seccomp profile, and nothing of
 * the image's own stop signal, health check or volumes.
 */
async function createBody(
  engine: DockerEngine,
  spec: ContainerSpec,
  memoryCgroup: MemoryCgroup | null | undefined,
): Promise<ContainerCreateBody> {
  const body = structuredClone(spec.body);
  limitContainer(
    body.HostConfig,
    spec.engineFacts ?? (await askEngineFacts(engine)),
    memoryCgroup,
    spec.memoryLimitMiB,
  );
  const image = await engine.inspectImage(body.Image);
  if (image && Object.keys(image.Config?.Volumes ?? {}).length)
    throw new Error(`the image ${body.Image} declares volumes; an agent image may not (its root is read-only)`);
  return body;
}

/**
 * The run's memory limit (its cgroup as the container's parent where the engine manages cgroupfs
 * paths, else the engine's own limit) and svc's seccomp profile: the agent's container and the
 * run's service containers (container-services.ts) alike.
 */
export function limitContainer(
  host: ContainerCreateBody['HostConfig'],
  facts: EngineFacts,
  memoryCgroup: MemoryCgroup | null | undefined,
  memoryLimitMiB: number | null,
): void {
  if (memoryCgroup && facts.cgroupDriver === 'cgroupfs') {
    // The run's memory cgroup holds the limit, and the OOM evidence that outlives the container.
    host.CgroupParent = memoryCgroup.path.replace(/^\/sys\/fs\/cgroup(\/memory)?/, '') || '/';
  } else if (memoryLimitMiB || memoryCgroup) {
    host.Memory = (memoryLimitMiB ?? memoryCgroup!.limitMiB) * 1024 * 1024;
    host.MemorySwap = host.Memory;
  }
  // svc's profile: the engine's default without namespace creation (no nested user namespace).
  // Podman takes it as a path on its host, Docker as the profile itself.
  host.SecurityOpt.push(`seccomp=${facts.podman ? SECCOMP_PROFILE : readFileSync(SECCOMP_PROFILE, 'utf8')}`);
}

/**
 * Runs the sandbox's container. `onSpawn` is called once the agent's container is running; a
 * refused create or start resolves `exited` with a spawnError. With `reattach` the container must
 * already exist (a missing one is `vanished`): a successor never starts the agent again.
 */
export function runContainer(
  spec: ContainerSpec,
  memoryCgroup: MemoryCgroup | null | undefined,
  output: OutputFiles,
  options: { reattach: boolean },
  onSpawn: (record: AgentRecord) => void,
): ContainerRun {
  const engine = new DockerEngine(spec.engine);
  let containerId: string | null = null;
  let stopRequested = false;

  const exited = (async (): Promise<Exit> => {
    const existing = await engine.inspect(spec.name).catch(() => null);
    if (existing) containerId = existing.Id;
    else if (options.reattach) return lost('vanished');
    else {
      try {
        containerId = await engine.create(spec.name, await createBody(engine, spec, memoryCgroup));
      } catch (error) {
        // A create that lost a race finds the winner's (Docker answers 409 for a name in use, Podman 500).
        const winner = await engine.inspect(spec.name).catch(() => null);
        if (!winner)
          return startFailure('CONTAINER_CREATE', `the container could not be created: ${(error as Error).message}`);
        containerId = winner.Id;
      }
    }
    const state = await startedState(engine, containerId);
    if ('error' in state) {
      await engine.remove(containerId).catch(() => {});
      return startFailure('CONTAINER_START', `the container could not start: ${state.error}`);
    }
    onSpawn({
      pid: state.Pid,
      startTime: state.Pid ? (processStartTime(state.Pid) ?? null) : null,
      spawnedAt: new Date().toISOString(),
      containerId,
    });
    if (stopRequested) await engine.stop(containerId, STOP_GRACE_SECONDS).catch(() => {});
    const logs = copyContainerOutput(engine, containerId, output);
    const ended = await waitForExit(engine, containerId, spec.unreachableAfterMs);
    if (ended.loss) {
      logs.stop();
      return lost(ended.loss);
    }
    await logs.drain();
    // A container removed behind svc's back is first killed (SIGKILL, 137), then gone: a kill svc
    // did not send is looked at again a moment later, so it is not taken for the agent's death.
    const killedByOthers = ended.exitCode === 137 && !stopRequested;
    if (killedByOthers) await sleep(REMOVAL_SETTLE_MS);
    const seen = await engine.inspect(containerId).catch(() => undefined);
    if (killedByOthers && seen === null) return lost('vanished');
    const final = seen?.State;
    const oomKilled =
      final?.OOMKilled === true ||
      (ended.exitCode === 137 && !stopRequested && memoryCgroup ? memoryLimitWasHit(memoryCgroup) : false);
    return { exitCode: ended.exitCode, signal: null, spawnError: null, oomKilled, endedAt: new Date().toISOString() };
  })();

  return {
    exited,
    stop() {
      stopRequested = true;
      if (containerId) void engine.stop(containerId, STOP_GRACE_SECONDS).catch(() => {});
    },
    async remove() {
      if (containerId) await engine.remove(containerId);
    },
  };
}

/** Starts a created container (a found one may run already); an engine blip is retried for a while. */
async function startedState(
  engine: DockerEngine,
  id: string,
): Promise<{ Pid: number; Running: boolean } | { error: string }> {
  let lastError = 'the engine did not answer';
  for (let attempt = 0; attempt < 10; attempt++) {
    try {
      const state = (await engine.inspect(id))?.State;
      if (!state) return { error: 'the container disappeared' };
      if (state.Status !== 'created') return state;
      await engine.start(id);
      continue; // started: its state at once
    } catch (error) {
      // An answer is final (a bad option, a missing binary); no answer may be a restarting engine.
      if (error instanceof EngineError) return { error: error.message };
      lastError = (error as Error).message;
    }
    await sleep(500 * (attempt + 1));
  }
  return { error: lastError };
}
