// The stand-in's kubelet: runs a Pod's containers on Podman (one network namespace) through the same Engine API client
// the container backend uses, on an internal network from which only the host is reachable (what
// svc's NetworkPolicy allows: the workers' gateways). It keeps the Pod's status the way a kubelet
// reports it: Pending (ErrImagePull, CreateContainerConfigError), Running, terminated with its exit
// code and reason (OOMKilled, Error, Completed), DeadlineExceeded, Evicted.
import { chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { DockerEngine } from '../../sandbox/backends/container/docker-engine.ts';
import { createMemoryCgroup, memoryLimitWasHit, removeMemoryCgroup } from '../../sandbox/host/memory-cgroup.ts';
import type { ContainerCreateBody, MemoryCgroup } from '../../sandbox/spec.ts';

/** The node's seccomp directory (the kubelet's): a `Localhost` profile `seccomp.json` is svc's own. */
export const NODE_SECCOMP_DIR = resolve('sandbox/backends/container/image');
/** svc's profile names the calls it refuses beyond the runtime's default in an entry of their own. */
const BEYOND_RUNTIME_DEFAULT = ['ptrace', 'process_vm_readv', 'process_vm_writev', 'pidfd_getfd'];

/**
 * The profile a node's RuntimeDefault stands for here: containerd's (moby's) forbids namespaces too,
 * as svc's does, but lets a process ptrace another of its uid: svc's profile with those allowed.
 */
function runtimeDefaultSeccomp(): string {
  const profile = JSON.parse(readFileSync(join(NODE_SECCOMP_DIR, 'seccomp.json'), 'utf8')) as {
    syscalls: { names: string[]; action: string }[];
  };
  const syscalls = profile.syscalls.filter(
    (entry) => !BEYOND_RUNTIME_DEFAULT.every((name) => entry.names.includes(name)),
  );
  syscalls.push({ names: BEYOND_RUNTIME_DEFAULT, action: 'SCMP_ACT_ALLOW' });
  const file = join(mkdtempSync(join(tmpdir(), 'svc-kube-seccomp-')), 'runtime-default.json');
  writeFileSync(file, JSON.stringify({ ...profile, syscalls }));
  return file;
}
let runtimeDefault: string | undefined;

/** The profile file a pod's `seccompProfile` names on this node. */
function seccompFile(profile: { type: string; localhostProfile?: string } | undefined): string {
  if (profile?.type === 'Localhost') return join(NODE_SECCOMP_DIR, profile.localhostProfile!);
  return (runtimeDefault ??= runtimeDefaultSeccomp());
}

export interface StandInPod {
  pod: V1Pod;
  /** The first container's (the agent's); `others` are the rest, by name. */
  containerId: string | null;
  others?: { name: string; id: string }[];
  cgroup: MemoryCgroup | null;
  volumes: string;
  deadlineTimer?: NodeJS.Timeout;
  /** The kubelet has stopped it (deadline, eviction): what to report once the container is gone. */
  stoppedFor?: { reason: string; message: string };
}

const mebibytes = (quantity: string | undefined) => (quantity?.endsWith('Mi') ? Number(quantity.slice(0, -2)) : null);
const millicores = (quantity: string | undefined) => (quantity?.endsWith('m') ? Number(quantity.slice(0, -1)) : null);

export class StandInKubelet {
  readonly engine: DockerEngine;
  readonly network: string;
  readonly secrets: Record<string, Record<string, string>>;
  constructor(engineAddress: string, network: string, secrets: Record<string, Record<string, string>>) {
    this.engine = new DockerEngine(engineAddress);
    this.network = network;
    this.secrets = secrets;
  }

  #setStatus(entry: StandInPod, status: V1Pod['status']): void {
    entry.pod = { ...entry.pod, status: { ...entry.pod.status, ...status } };
  }

  #waiting(entry: StandInPod, reason: string, message: string): void {
    this.#setStatus(entry, {
      phase: 'Pending',
      containerStatuses: [
        {
          name: 'agent',
          image: '',
          imageID: '',
          ready: false,
          restartCount: 0,
          state: { waiting: { reason, message } },
        },
      ],
    });
  }

  /**
   * Starts the pod's containers, in order: the first on the pods' network (with the pod's
   * `hostAliases` in its hosts file), the others in its network namespace, as a pod's containers
   * share one. A pod that cannot start stays Pending with the kubelet's reason.
   */
  async start(entry: StandInPod): Promise<void> {
    const spec = entry.pod.spec!;
    for (const container of spec.containers)
      if (!(await this.engine.imageExists(container.image!)))
        return this.#waiting(entry, 'ErrImagePull', `rpc error: failed to pull image "${container.image}": not found`);
    const envs: string[][] = [];
    for (const container of spec.containers) {
      const env: string[] = [];
      for (const variable of container.env ?? []) {
        const ref = variable.valueFrom?.secretKeyRef;
        const value = ref?.name ? this.secrets[ref.name]?.[ref.key] : undefined;
        if (!ref) env.push(`${variable.name}=${variable.value ?? ''}`);
        else if (value === undefined)
          return this.#waiting(entry, 'CreateContainerConfigError', `secret "${ref.name}" not found`);
        else env.push(`${variable.name}=${value}`);
      }
      envs.push(env);
    }
    const security = spec.securityContext ?? {};
    // The pod's memory is what its containers' limits add up to.
    const limits = spec.containers.map((container) => mebibytes(container.resources?.limits?.memory));
    if (limits.every((limit) => limit !== null)) {
      const limit = createMemoryCgroup(
        `kube-${entry.pod.metadata!.name}`,
        limits.reduce((sum, one) => sum! + one!, 0)!,
      );
      if (limit.enforced) entry.cgroup = limit.cgroup;
    }
    const hosts = (spec.hostAliases ?? []).flatMap((alias) => alias.hostnames!.map((host) => `${host}:${alias.ip}`));
    const started: { name: string; id: string }[] = [];
    for (const [index, container] of spec.containers.entries()) {
      const uid = container.securityContext?.runAsUser ?? security.runAsUser ?? 0;
      const gid = container.securityContext?.runAsGroup ?? security.runAsGroup ?? 0;
      const binds = (container.volumeMounts ?? []).map((mount) => {
        const source = join(entry.volumes, mount.name);
        mkdirSync(source, { recursive: true, mode: 0o2775 });
        chownSync(source, uid, security.fsGroup ?? gid);
        return `${source}:${mount.mountPath}:${mount.readOnly ? 'ro' : 'rw'}`;
      });
      const cpu = millicores(container.resources?.limits?.cpu);
      const drop = container.securityContext?.capabilities?.drop ?? [];
      const first = started[0];
      // Not svc's own container body: a pod has the pods' network and what its manifest drops.
      const body = {
        Image: container.image,
        // A container without a command runs its image's entry point (with its args, if any).
        ...(container.command ? { Entrypoint: container.command } : {}),
        ...(container.args || container.command ? { Cmd: container.args ?? [] } : {}),
        Env: envs[index],
        User: `${uid}:${gid}`,
        WorkingDir: container.workingDir ?? '/',
        StopSignal: 'SIGTERM',
        Healthcheck: { Test: ['NONE'] },
        Labels: { 'svc.kube-stand-in': entry.pod.metadata!.name! },
        HostConfig: {
          NetworkMode: first ? `container:${first.id}` : this.network,
          ...(!first && hosts.length ? { ExtraHosts: hosts } : {}),
          CapDrop: drop,
          SecurityOpt: [
            ...(container.securityContext?.allowPrivilegeEscalation === false ? ['no-new-privileges'] : []),
            `seccomp=${seccompFile(container.securityContext?.seccompProfile ?? security.seccompProfile)}`,
          ],
          ReadonlyRootfs: container.securityContext?.readOnlyRootFilesystem === true,
          Binds: binds,
          Tmpfs: {},
          GroupAdd: security.fsGroup !== undefined ? [String(security.fsGroup)] : [],
          PidsLimit: 1024,
          Ulimits: [
            { Name: 'nofile', Soft: 1024, Hard: 1024 },
            { Name: 'nproc', Soft: 1024, Hard: 1024 },
          ],
          ...(entry.cgroup ? { CgroupParent: entry.cgroup.path.replace(/^\/sys\/fs\/cgroup(\/memory)?/, '') } : {}),
          ...(cpu ? { NanoCpus: cpu * 1_000_000 } : {}),
          Runtime: 'runc',
        },
      } as unknown as ContainerCreateBody;
      try {
        const suffix = index === 0 ? '' : `-${container.name}`;
        const id = await this.engine.create(`kube-${entry.pod.metadata!.name}${suffix}`, body);
        started.push({ name: container.name, id });
        if (index === 0) entry.containerId = id;
        else (entry.others ??= []).push({ name: container.name, id });
        await this.engine.start(id);
      } catch (error) {
        return this.#waiting(entry, 'CreateContainerError', (error as Error).message);
      }
    }
    const now = new Date();
    // The pod's address on the pods' network (what a Service forwards to).
    const inspected = (await this.engine.inspect(entry.containerId!).catch(() => null)) as {
      NetworkSettings?: { Networks?: Record<string, { IPAddress?: string }> };
    } | null;
    const podIP = inspected?.NetworkSettings?.Networks?.[this.network]?.IPAddress;
    this.#setStatus(entry, {
      phase: 'Running',
      startTime: now,
      ...(podIP ? { podIP, podIPs: [{ ip: podIP }] } : {}),
      containerStatuses: spec.containers.map((container) => ({
        name: container.name,
        image: container.image!,
        imageID: container.image!,
        ready: true,
        restartCount: 0,
        started: true,
        state: { running: { startedAt: now } },
      })),
    });
  }

  /** The pod's containers by name, the first one's as `containerId`. */
  #containers(entry: StandInPod): { name: string; id: string }[] {
    if (!entry.containerId) return [];
    return [{ name: entry.pod.spec!.containers[0]!.name, id: entry.containerId }, ...(entry.others ?? [])];
  }

  /** A container's id by name (a log names its container), or the first's when there is one. */
  containerOf(entry: StandInPod, name: string | null): string | null {
    const containers = this.#containers(entry);
    if (name === null) return containers.length === 1 ? containers[0]!.id : null;
    return containers.find((container) => container.name === name)?.id ?? null;
  }

  /**
   * Reads the containers' states into the pod's status; answers whether it changed. The pod ends
   * (Succeeded when each exited 0) once all of its containers have, as with `restartPolicy: Never`.
   */
  async refresh(entry: StandInPod): Promise<boolean> {
    if (!entry.containerId || entry.pod.status?.phase !== 'Running') return false;
    let changed = false;
    const statuses = [...entry.pod.status.containerStatuses!];
    for (const { name, id } of this.#containers(entry)) {
      const index = statuses.findIndex((status) => status.name === name);
      if (statuses[index]!.state?.terminated) continue;
      const state = (await this.engine.inspect(id).catch(() => undefined))?.State;
      if (!state || state.Running) continue;
      const exitCode = state.ExitCode;
      const oom = exitCode === 137 && !entry.stoppedFor && entry.cgroup !== null && memoryLimitWasHit(entry.cgroup);
      const reason = oom ? 'OOMKilled' : exitCode === 0 ? 'Completed' : 'Error';
      statuses[index] = {
        ...statuses[index]!,
        ready: false,
        state: { terminated: { exitCode, reason, finishedAt: new Date() } },
      };
      changed = true;
    }
    if (!changed) return false;
    const ended = statuses.every((status) => status.state?.terminated);
    const succeeded = statuses.every((status) => status.state?.terminated?.exitCode === 0);
    this.#setStatus(entry, {
      ...(ended ? { phase: succeeded && !entry.stoppedFor ? 'Succeeded' : 'Failed', ...(entry.stoppedFor ?? {}) } : {}),
      containerStatuses: statuses,
    });
    return true;
  }

  /** The kubelet's stop: SIGTERM, then SIGKILL after the grace period; the status says why. */
  async stop(entry: StandInPod, reason: string, message: string, graceSeconds?: number): Promise<void> {
    entry.stoppedFor ??= { reason, message };
    if (!entry.containerId || entry.pod.status?.phase !== 'Running') {
      this.#setStatus(entry, { phase: 'Failed', reason, message });
      return;
    }
    const grace = graceSeconds ?? entry.pod.spec!.terminationGracePeriodSeconds ?? 30;
    await Promise.all(this.#containers(entry).map(({ id }) => this.engine.stop(id, grace).catch(() => {})));
  }

  async remove(entry: StandInPod): Promise<void> {
    clearTimeout(entry.deadlineTimer);
    // The others first: the first one holds their network. Podman answers 500 while a container is
    // still stopping: asked again until it is gone.
    for (const { id } of this.#containers(entry).reverse())
      for (let attempt = 0; attempt < 20; attempt++) {
        if (
          await this.engine.remove(id).then(
            () => true,
            () => false,
          )
        )
          break;
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    if (entry.cgroup) removeMemoryCgroup(entry.cgroup);
    rmSync(entry.volumes, { recursive: true, force: true });
  }
}
