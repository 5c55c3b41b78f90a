// The agent of a container or a pod under its supervisor (supervision.ts): the engine or the cluster
// owns the process, the supervisor its output, its end and its removal. Loaded only when a
// sandbox needs one (the runners load large modules: a supervisor starts on every run's path).
import { existsSync } from 'node:fs';
import { readJsonIfExists, writeJsonAtomic, type SandboxFiles } from './files.ts';
import type { ContainerSpec, PodSpec, MemoryCgroup, AgentRecord, ExitRecord } from '../spec.ts';

/** What a runner needs of the supervision, and what it reports to it. */
export interface SupervisedBackend {
  files: SandboxFiles;
  reattach: boolean;
  memoryCgroup: MemoryCgroup | null | undefined;
  output: { stdoutFd: number; stderrFd: number; cursorFile: string };
  /** The agent runs: the supervision awaits its end. */
  started(): void;
  ended(record: ExitRecord, cleanup: () => Promise<void>): void;
  failed(code: string, message: string): void;
}

/** Runs the agent's container (container backend); answers how to stop it. */
export async function runAgentContainer(container: ContainerSpec, backend: SupervisedBackend): Promise<() => void> {
  const { runContainer } = await import('../backends/container/container-runner.ts');
  const { files, reattach } = backend;
  backend.started();
  const run = runContainer(container, backend.memoryCgroup, backend.output, { reattach }, (record) => {
    // A reattached container keeps the record of its first start.
    if (!reattach || !existsSync(files.agent)) writeJsonAtomic<AgentRecord>(files.agent, record);
  });
  void run.exited.then(
    (exit) => backend.ended({ ...exit, stoppedBySvc: false }, run.remove),
    (error: Error) => backend.failed('CONTAINER_ENGINE', `the container engine failed: ${error.message}`),
  );
  return () => run.stop();
}

/** Runs the agent's pod (Kubernetes backend) behind the run's gateway on this worker; answers how to stop it. */
export async function runAgentPod(pod: PodSpec, backend: SupervisedBackend): Promise<() => void> {
  // The Kubernetes client takes a few hundred ms to load.
  const [{ runPod }, { startPodGateway }] = await Promise.all([
    import('../backends/kubernetes/pod-runner.ts'),
    import('../backends/kubernetes/pod-gateway.ts'),
  ]);
  const { files, reattach } = backend;
  let gateway: string;
  try {
    const { port } = await startPodGateway({ ...pod.gateway, socketDir: files.net }, files.gateway);
    gateway = `${pod.gateway.host}:${port}`;
  } catch (error) {
    // A successor that cannot listen where the pod was told still watches the pod to its end.
    if (!reattach) {
      backend.failed('POD_GATEWAY', `the run's gateway could not listen: ${(error as Error).message}`);
      return () => {};
    }
    gateway = '';
  }
  backend.started();
  const run = runPod(pod, gateway, backend.output, { reattach }, (record) => {
    if (!reattach || !existsSync(files.agent)) writeJsonAtomic<AgentRecord>(files.agent, record);
  });
  void run.exited.then(
    (exit) => {
      const handedBack = readJsonIfExists<{ handedBack: string[] }>(files.gateway)?.handedBack ?? [];
      const notHandedBack = exit.exitCode !== null && !handedBack.includes('workspace');
      backend.ended({ ...exit, ...(notHandedBack ? { notHandedBack } : {}), stoppedBySvc: false }, run.remove);
    },
    (error: Error) => backend.failed('KUBERNETES', `the Kubernetes API failed: ${error.message}`),
  );
  return () => run.stop();
}
