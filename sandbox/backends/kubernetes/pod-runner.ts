// The supervisor's half of the Kubernetes backend: create the run's pod (a supervisor that takes
// over only finds it), copy its log into the sandbox's log files, watch it to its end, say how it
// ended, and delete it. The file contract is the container backend's, so the activities watch a
// pod exactly as they watch a container or a bubblewrap sandbox.
import type { V1Pod } from '@kubernetes/client-node';
import { serviceNotReady } from '../../../core/agent-exit.ts';
import {
  serviceFailureLines,
  SERVICE_FAILURE_LOG_LINES,
  type ServiceFailure,
} from '../../../core/environment-services.ts';
import { processStartTime } from '../../../platform/processes.ts';
import { copySandboxOutput, type OutputFiles } from '../container/container-output.ts';
import { startFailure } from '../../host/files.ts';
import { KubeApi, KubeError } from './kube-api.ts';
import { POD_CONFIG_VARIABLE, serviceContainerName } from './pod-launch.ts';
import { STDERR_MARK } from '../../inside/wire.ts';
import { watchPod, type PodEnd } from './pod-watch.ts';
import type { AgentRecord, BackendExit, PodConfig, PodSpec } from '../../spec.ts';

type Exit = BackendExit;

export interface PodRun {
  exited: Promise<Exit>;
  stop(): void;
  /** Deletes the pod, once its exit is recorded. */
  remove(): Promise<void>;
}

/** The manifest with the harness told where the run's gateway listens. */
function withGateway(spec: PodSpec, gateway: string): V1Pod {
  const manifest = structuredClone(spec.manifest);
  const { token, syncIn, syncOut } = spec.gateway;
  manifest.spec!.containers[0]!.env!.push({
    name: POD_CONFIG_VARIABLE,
    value: JSON.stringify({ gateway, token, syncIn, syncOut } satisfies PodConfig),
  });
  return manifest;
}

/** What the pod's end means for the run. */
function exitOf(end: PodEnd, stopRequested: boolean): Exit {
  const endedAt = new Date().toISOString();
  switch (end.kind) {
    case 'lost':
      return { exitCode: null, signal: null, spawnError: null, loss: end.loss, detail: end.detail, endedAt };
    case 'refused':
      return startFailure('POD_START', end.message);
    case 'terminated':
      return {
        exitCode: end.exitCode,
        signal: null,
        spawnError: null,
        oomKilled: end.reason === 'OOMKilled',
        // A pod svc stopped before its container ran has no exit code; any other is the agent's.
        ...(end.exitCode === null && !stopRequested ? { loss: 'vanished' as const } : {}),
        endedAt,
      };
  }
}

/**
 * The service the pod's harness gave up on, with its container's last lines, read before the pod
 * goes. Only a container of this pod's own services is read: the harness's line is in the agent's
 * log, which the agent could have written too.
 */
async function serviceFailure(
  api: KubeApi,
  spec: PodSpec,
  notReady: { service: string; message: string },
): Promise<ServiceFailure | null> {
  const container = serviceContainerName(notReady.service);
  if (!spec.manifest.spec?.containers.some((entry) => entry.name === container)) return null;
  const lines = await api.logTail(spec.name, container, SERVICE_FAILURE_LOG_LINES);
  return { ...notReady, logs: serviceFailureLines(lines) };
}

/**
 * Runs the sandbox's pod. `onSpawn` is called once its container runs; a refused create resolves
 * `exited` with a spawnError. With `reattach` the pod must already exist (a missing one is
 * `vanished`): a successor never starts the agent again.
 */
export function runPod(
  spec: PodSpec,
  gateway: string,
  output: OutputFiles,
  options: { reattach: boolean },
  onSpawn: (record: AgentRecord) => void,
): PodRun {
  const api = new KubeApi(spec.namespace, spec.kubeconfig);
  let stopRequested = false;
  let exists = false;

  const exited = (async (): Promise<Exit> => {
    if (!options.reattach) {
      try {
        await api.create(withGateway(spec, gateway));
      } catch (error) {
        // A create that lost a race (or was retried) finds the pod there: it is this sandbox's.
        if (!(error instanceof KubeError && error.status === 409))
          return startFailure('POD_CREATE', `the pod could not be created: ${(error as Error).message}`);
      }
    }
    exists = true;
    if (stopRequested) await api.stop(spec.name).catch(() => {});
    let notReady: ReturnType<typeof serviceNotReady> = null;
    const logs = copySandboxOutput((copier) => {
      const sinceSeconds = copier.resume();
      return api.followLog(
        spec.name,
        (line) => {
          const space = line.indexOf(' ');
          const stamp = line.slice(0, Math.max(space, 0));
          const payload = space >= 0 ? line.slice(space + 1) : line;
          const stderr = payload.startsWith(STDERR_MARK);
          if (stderr) notReady = serviceNotReady(payload.slice(1)) ?? notReady;
          copier.onFrame(stderr ? 2 : 1, Buffer.from(`${stamp} ${stderr ? payload.slice(1) : payload}\n`));
        },
        sinceSeconds ? { sinceTime: new Date(sinceSeconds * 1000).toISOString() } : {},
      );
    }, output);
    let following = false;
    const end = await watchPod(api, spec.name, spec.unreachableAfterMs, () => {
      if (following) return;
      following = true;
      onSpawn({
        pid: 0,
        startTime: processStartTime(process.pid) ?? null,
        spawnedAt: new Date().toISOString(),
        pod: `${spec.namespace}/${spec.name}`,
      });
    });
    if (end.kind !== 'terminated') {
      logs.stop();
      return exitOf(end, stopRequested);
    }
    await logs.drain();
    const exit = exitOf(end, stopRequested);
    const failure = end.exitCode === 125 && notReady ? await serviceFailure(api, spec, notReady) : null;
    return failure ? { ...exit, serviceFailure: failure } : exit;
  })();

  return {
    exited,
    stop() {
      stopRequested = true;
      if (exists) void api.stop(spec.name).catch(() => {});
    },
    async remove() {
      await api.remove(spec.name);
    },
  };
}
