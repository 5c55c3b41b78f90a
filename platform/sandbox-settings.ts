// The operator's sandbox settings (SVC_SANDBOX*), parsed once at start-up. How runs are then
// isolated is the sandbox activities' business (sandbox/host/isolation.ts).
import { readFileSync } from 'node:fs';
import { constrainedMemory } from 'node:process';
import { totalmem } from 'node:os';
import { parseEgressList, type EgressRule } from '../core/egress-rules.ts';
import type { ProjectPodSettings } from '../core/svc-config.schema.ts';

/** How an agent is isolated: a bubblewrap sandbox on the worker's host, a container, a pod, or nothing (opt-in). */
export type Isolation = 'bubblewrap' | 'container' | 'kubernetes' | 'process';

/** The container backend's engine and image (SVC_SANDBOX=container; docs/sandboxes.md). */
export interface ContainerSettings {
  /** The Docker Engine API the worker drives (SVC_CONTAINER_ENGINE, else DOCKER_HOST, else Podman's socket). */
  engine: string;
  /** The agent image (SVC_AGENT_IMAGE); a project's `agentImage` wins, if `images` allows it. */
  image: string;
  /**
   * The images a project's `agentImage` may name (SVC_AGENT_IMAGES): exact references, or a prefix
   * ending in `/*` or `:*`. `image` is always among them.
   */
  images: string[];
  /** The OCI runtime asked of the engine (SVC_CONTAINER_RUNTIME, e.g. runc), or the engine's default. */
  runtime: string | null;
  /**
   * How long the engine may not answer about a live run before it is `sandbox_unreachable`
   * (SVC_CONTAINER_UNREACHABLE_MS).
   */
  unreachableAfterMs: number;
}

/** The Kubernetes backend's cluster side (SVC_SANDBOX=kubernetes; docs/sandboxes.md). */
export interface KubernetesSettings {
  /** The namespace run pods live in (SVC_KUBERNETES_NAMESPACE). */
  namespace: string;
  /** The cluster's kubeconfig file (KUBECONFIG); null: ~/.kube/config, else the in-cluster service account. */
  kubeconfig: string | null;
  /** The address pods reach this worker's gateways at (SVC_KUBERNETES_GATEWAY_HOST, else POD_IP). */
  gatewayHost: string | null;
  /** The address the gateways listen on (SVC_KUBERNETES_GATEWAY_BIND). */
  gatewayBind: string;
  /** The ports gateways take (SVC_KUBERNETES_GATEWAY_PORTS, `first-last`): what the pods' NetworkPolicy opens. */
  gatewayPorts: { first: number; last: number };
  /**
   * What every run pod gets from the operator: node selector, tolerations, service account…
   * (SVC_KUBERNETES_POD_DEFAULTS).
   */
  podDefaults: PodDefaults;
  /** How long the API server may not answer about a live pod before it is `sandbox_unreachable`. */
  unreachableAfterMs: number;
  /** Admission caps (api/services/admission.ts): queued runs, and svc's pods the cluster has not started. */
  admission: { queueDepth: number; pendingPods: number };
  /** The most a pod may hand back per part (workspace, home, outbox), in MiB (SVC_KUBERNETES_HAND_BACK_MAX_MIB). */
  handBackMaxMiB: number;
  /**
   * svc's seccomp profile as installed on every node, relative to the kubelet's seccomp directory
   * (SVC_KUBERNETES_SECCOMP_PROFILE): pods get it as their `Localhost` profile. Null: the runtime's
   * default, which lets a pod's processes ptrace one another.
   */
  seccompProfile: string | null;
}

/** Pod settings an operator fixes for every run pod (a JSON file; docs/sandboxes.md). */
export interface PodDefaults {
  nodeSelector?: Record<string, string>;
  tolerations?: Record<string, unknown>[];
  serviceAccountName?: string;
  imagePullSecrets?: string[];
  /** Environment from Secrets, by reference: the value never passes through svc. */
  secretEnv?: { name: string; secret: string; key: string }[];
  runtimeClassName?: string;
  /** What a project's own `kubernetes` settings may name: nothing else is accepted from a repository. */
  projectsMay?: { secrets?: string[]; serviceAccounts?: string[] };
}

/** A host path bound into the sandbox, read-only unless `writable`. */
export interface Bind {
  source: string;
  target: string;
  writable: boolean;
}

export interface SandboxSettings {
  mode: 'auto' | Isolation;
  /** SVC_ALLOW_UNSANDBOXED=1: the operator accepts agents running as plain processes. */
  allowUnsandboxed: boolean;
  /** Extra bind mounts (SVC_SANDBOX_BINDS="src[:dst][:rw],…"), read-only unless marked rw. */
  binds: Bind[];
  /**
   * Default memory limit of an agent's sandbox (SVC_SANDBOX_MEMORY_MIB, else defaultSandboxMemoryMiB;
   * null: `off`); a project's own wins.
   */
  memoryLimitMiB: number | null;
  /**
   * The most a run's workspace may take on disk while its agent runs (SVC_RUN_WORKSPACE_MAX_MIB;
   * null: `off`). Past it the agent is stopped and the run fails `workspace_too_large`.
   */
  workspaceMaxMiB: number | null;
  /** CPU limit of a container or pod sandbox (SVC_SANDBOX_CPU_MILLICORES): the default and the ceiling. */
  cpuMillicores: number | null;
  /** The operator's egress allowlist entries (SVC_SANDBOX_EGRESS). */
  egress: EgressRule[];
  /** Extra read-only toolchain directories (SVC_SANDBOX_TOOLCHAIN, colon-separated). */
  toolchain: string[];
  /** First host uid of the range sandboxes run as when svc is root (SVC_SANDBOX_UID_BASE). */
  uidBase: number;
  /** Processes and threads one sandbox may have at once when svc is root (SVC_SANDBOX_MAX_PROCESSES). */
  maxProcesses: number;
  /**
   * Who supervises a sandbox whose agent is a process of this host (SVC_SUPERVISOR): one shared
   * supervisor per worker (`shared`, the default) or a supervisor process per run (`per-run`).
   */
  supervisor: 'shared' | 'per-run';
  container: ContainerSettings;
  kubernetes: KubernetesSettings;
}

/** A sandbox's memory limit when the operator sets none (docs/decisions/0045-default-disk-and-memory-limits.md). */
export const DEFAULT_SANDBOX_MEMORY_MIB = 4096;
export const DEFAULT_WORKSPACE_MAX_MIB = 10240;

/**
 * The default memory limit of a sandbox: 4096 MiB, or half of the memory this worker may use when
 * that is less (a small host runs svc, Temporal and other agents beside it). A pod runs on another
 * node, which this host's memory says nothing about: it gets 4096 MiB.
 */
export function defaultSandboxMemoryMiB(mode: SandboxSettings['mode'], usableMiB = usableMemoryMiB()): number {
  if (mode === 'kubernetes') return DEFAULT_SANDBOX_MEMORY_MIB;
  return Math.max(16, Math.min(DEFAULT_SANDBOX_MEMORY_MIB, Math.floor(usableMiB / 2)));
}

/** The host's memory, or this process's cgroup limit when lower. */
function usableMemoryMiB(): number {
  // 0 without a limit; cgroup v1 answers its "unlimited" (about 2^63) instead.
  const limit = constrainedMemory() || Number.POSITIVE_INFINITY;
  return Math.floor(Math.min(totalmem(), limit) / (1024 * 1024));
}

/** A size in MiB that `0` or `off` turns off (null); unset or empty: `fallback`. */
function mibOrOff(text: string | undefined, fallback: number, min: number, name: string): number | null {
  if (text === undefined || text === '') return fallback;
  if (text === 'off' || text === '0') return null;
  const value = Number(text);
  if (!Number.isInteger(value) || value < min)
    throw new Error(`${name} must be a whole number of MiB, at least ${min}, or 0/off for no limit, not "${text}"`);
  return value;
}

function positiveMs(text: string | undefined, fallback: number, name: string): number {
  if (!text) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1000)
    throw new Error(`${name} must be whole milliseconds, at least 1000, not "${text}"`);
  return value;
}

/** The image `scripts/build-agent-image` builds. */
export const DEFAULT_AGENT_IMAGE = 'localhost/svc-agent:latest';
/** Rootful Podman's API socket (`podman system service`). */
const DEFAULT_ENGINE = 'unix:///run/podman/podman.sock';

/** An image reference, or an allowlist prefix: a registry path, a tag or digest; no spaces, no shell. */
const IMAGE_REFERENCE = /^[a-z0-9][a-z0-9._\-/:@]*$/i;

function parseAgentImages(text: string | undefined, image: string): string[] {
  const entries = (text ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const reference = entry.endsWith('/*') || entry.endsWith(':*') ? entry.slice(0, -1) : entry;
    if (entry.length > 512 || !IMAGE_REFERENCE.test(reference) || reference.includes('*'))
      throw new Error(
        `SVC_AGENT_IMAGES: "${entry}" is not an image reference (registry/name:tag, name@sha256:…) ` +
          'or a prefix ending in /* or :*',
      );
  }
  return [...new Set([image, ...entries])];
}

/** What a project's `kubernetes` settings name that the operator does not let projects name (dispatch refuses it). */
export function disallowedPodSettings(operator: PodDefaults, project: ProjectPodSettings | null | undefined): string[] {
  if (!project) return [];
  const secrets = new Set(operator.projectsMay?.secrets ?? []);
  const accounts = new Set(operator.projectsMay?.serviceAccounts ?? []);
  return [
    ...(project.secretEnv ?? [])
      .filter((entry) => !secrets.has(entry.secret))
      .map((entry) => `Secret "${entry.secret}"`),
    ...(project.serviceAccountName && !accounts.has(project.serviceAccountName)
      ? [`service account "${project.serviceAccountName}"`]
      : []),
  ];
}

/**
 * Why `image` (a project's `agentImage`) may not run, or null when the operator's SVC_AGENT_IMAGES
 * allows it. A project's config is written by whoever can push to it: left free, it could name
 * any image the engine holds or can pull.
 */
export function agentImageRefusal(
  image: string | null | undefined,
  container: Pick<ContainerSettings, 'images'>,
): string | null {
  if (!image) return null;
  // A prefix admits names and tags, never a digest: the engine runs whichever image it holds with
  // that digest, whatever name is before it. A digest is allowed only as an exact entry.
  const allowed = container.images.some((entry) =>
    entry.endsWith('*')
      ? image.startsWith(entry.slice(0, -1)) && image.length > entry.length - 1 && !image.includes('@')
      : image === entry,
  );
  // The list itself is not named: a failed run's reason may be read by a public project's spectators.
  return allowed ? null : `agentImage "${image}" is not one of the images the operator allows (SVC_AGENT_IMAGES)`;
}

function parseBinds(text: string | undefined): Bind[] {
  return (text ?? '')
    .split(',')
    .filter(Boolean)
    .map((entry) => {
      const parts = entry.split(':');
      const writable = parts.length > 1 && parts[parts.length - 1] === 'rw';
      const mode = parts[parts.length - 1] === 'rw' || parts[parts.length - 1] === 'ro';
      const [source, target] = mode ? parts.slice(0, -1) : parts;
      if (!source?.startsWith('/') || (target !== undefined && !target.startsWith('/')))
        throw new Error(`SVC_SANDBOX_BINDS: "${entry}" is not src[:dst][:ro|rw] with absolute paths`);
      return { source, target: target || source, writable };
    });
}

/**
 * A sandbox's CPU limit: the project's `resources.limits.cpuMillicores`, never above the operator's
 * SVC_SANDBOX_CPU_MILLICORES (a project's config is written by whoever can push to it), else the
 * operator's.
 */
export function sandboxCpuLimit(project: number | null | undefined, settings: SandboxSettings): number | null {
  if (!project) return settings.cpuMillicores;
  return settings.cpuMillicores ? Math.min(project, settings.cpuMillicores) : project;
}

export function parseSandboxSettings(env: NodeJS.ProcessEnv): SandboxSettings {
  const mode = env.SVC_SANDBOX || 'auto';
  if (mode !== 'auto' && mode !== 'bubblewrap' && mode !== 'container' && mode !== 'kubernetes' && mode !== 'process')
    throw new Error(`SVC_SANDBOX must be auto, bubblewrap, container, kubernetes or process, not "${mode}"`);
  const allowUnsandboxed = env.SVC_ALLOW_UNSANDBOXED === '1';
  if (mode === 'process' && !allowUnsandboxed) {
    throw new Error(
      'SVC_SANDBOX=process runs agents with no isolation at all: ' +
        'set SVC_ALLOW_UNSANDBOXED=1 as well if that is really meant',
    );
  }
  const memory = mibOrOff(env.SVC_SANDBOX_MEMORY_MIB, defaultSandboxMemoryMiB(mode), 16, 'SVC_SANDBOX_MEMORY_MIB');
  const workspaceMax = mibOrOff(
    env.SVC_RUN_WORKSPACE_MAX_MIB,
    DEFAULT_WORKSPACE_MAX_MIB,
    1,
    'SVC_RUN_WORKSPACE_MAX_MIB',
  );
  const cpu = env.SVC_SANDBOX_CPU_MILLICORES ? Number(env.SVC_SANDBOX_CPU_MILLICORES) : null;
  if (cpu !== null && !(Number.isInteger(cpu) && cpu >= 10 && cpu <= 64_000))
    throw new Error(
      `SVC_SANDBOX_CPU_MILLICORES must be a whole number of millicores from 10 to 64000, not ` +
        `"${env.SVC_SANDBOX_CPU_MILLICORES}"`,
    );
  let egress: EgressRule[];
  try {
    egress = parseEgressList(env.SVC_SANDBOX_EGRESS, 'operator');
  } catch (error) {
    throw new Error(`SVC_SANDBOX_EGRESS: ${(error as Error).message}`);
  }
  const uidBase = env.SVC_SANDBOX_UID_BASE ? Number(env.SVC_SANDBOX_UID_BASE) : 2_000_000;
  if (!Number.isInteger(uidBase) || uidBase < 1000 || uidBase > 3_000_000_000)
    throw new Error(
      `SVC_SANDBOX_UID_BASE must be a uid between 1000 and 3000000000, not "${env.SVC_SANDBOX_UID_BASE}"`,
    );
  const toolchain = (env.SVC_SANDBOX_TOOLCHAIN ?? '').split(':').filter(Boolean);
  const maxProcesses = env.SVC_SANDBOX_MAX_PROCESSES ? Number(env.SVC_SANDBOX_MAX_PROCESSES) : 1024;
  if (!Number.isInteger(maxProcesses) || maxProcesses < 16)
    throw new Error(
      `SVC_SANDBOX_MAX_PROCESSES must be a whole number, at least 16, not "${env.SVC_SANDBOX_MAX_PROCESSES}"`,
    );
  const supervisor = env.SVC_SUPERVISOR || 'shared';
  if (supervisor !== 'shared' && supervisor !== 'per-run')
    throw new Error(`SVC_SUPERVISOR must be shared or per-run, not "${env.SVC_SUPERVISOR}"`);
  return {
    mode,
    allowUnsandboxed,
    supervisor,
    binds: parseBinds(env.SVC_SANDBOX_BINDS),
    memoryLimitMiB: memory,
    workspaceMaxMiB: workspaceMax,
    cpuMillicores: cpu,
    egress,
    toolchain,
    uidBase,
    maxProcesses,
    container: {
      engine: env.SVC_CONTAINER_ENGINE || env.DOCKER_HOST || DEFAULT_ENGINE,
      image: env.SVC_AGENT_IMAGE || DEFAULT_AGENT_IMAGE,
      images: parseAgentImages(env.SVC_AGENT_IMAGES, env.SVC_AGENT_IMAGE || DEFAULT_AGENT_IMAGE),
      runtime: env.SVC_CONTAINER_RUNTIME || null,
      unreachableAfterMs: positiveMs(env.SVC_CONTAINER_UNREACHABLE_MS, 60_000, 'SVC_CONTAINER_UNREACHABLE_MS'),
    },
    kubernetes: parseKubernetesSettings(env),
  };
}

function parseKubernetesSettings(env: NodeJS.ProcessEnv): KubernetesSettings {
  const handBack = env.SVC_KUBERNETES_HAND_BACK_MAX_MIB ? Number(env.SVC_KUBERNETES_HAND_BACK_MAX_MIB) : 4096;
  if (!Number.isInteger(handBack) || handBack < 1)
    throw new Error(
      `SVC_KUBERNETES_HAND_BACK_MAX_MIB must be a whole number of MiB, not "${env.SVC_KUBERNETES_HAND_BACK_MAX_MIB}"`,
    );
  let podDefaults: PodDefaults = {};
  if (env.SVC_KUBERNETES_POD_DEFAULTS) {
    try {
      podDefaults = JSON.parse(readFileSync(env.SVC_KUBERNETES_POD_DEFAULTS, 'utf8')) as PodDefaults;
    } catch (error) {
      throw new Error(`SVC_KUBERNETES_POD_DEFAULTS: ${(error as Error).message}`);
    }
    if (typeof podDefaults !== 'object' || podDefaults === null || Array.isArray(podDefaults))
      throw new Error('SVC_KUBERNETES_POD_DEFAULTS must name a file holding one JSON object');
  }
  return {
    namespace: env.SVC_KUBERNETES_NAMESPACE || 'svc-runs',
    kubeconfig: env.KUBECONFIG || null,
    gatewayHost: env.SVC_KUBERNETES_GATEWAY_HOST || env.POD_IP || null,
    gatewayBind: env.SVC_KUBERNETES_GATEWAY_BIND || '0.0.0.0',
    gatewayPorts: parsePortRange(env.SVC_KUBERNETES_GATEWAY_PORTS || '40000-40999'),
    podDefaults,
    unreachableAfterMs: positiveMs(env.SVC_KUBERNETES_UNREACHABLE_MS, 60_000, 'SVC_KUBERNETES_UNREACHABLE_MS'),
    handBackMaxMiB: handBack,
    seccompProfile: parseSeccompProfile(env.SVC_KUBERNETES_SECCOMP_PROFILE),
    admission: {
      queueDepth: wholeAtLeastOne(env.SVC_ADMISSION_QUEUE_DEPTH, 50, 'SVC_ADMISSION_QUEUE_DEPTH'),
      pendingPods: wholeAtLeastOne(env.SVC_ADMISSION_PENDING_PODS, 20, 'SVC_ADMISSION_PENDING_PODS'),
    },
  };
}

function parseSeccompProfile(text: string | undefined): string | null {
  if (!text) return null;
  if (text.startsWith('/') || text.split('/').includes('..') || !/^[\w./-]+$/.test(text))
    throw new Error(
      `SVC_KUBERNETES_SECCOMP_PROFILE must be a path relative to the kubelet's seccomp directory, not "${text}"`,
    );
  return text;
}

function parsePortRange(text: string): { first: number; last: number } {
  const match = /^(\d+)-(\d+)$/.exec(text);
  const [first, last] = match ? [Number(match[1]), Number(match[2])] : [0, 0];
  if (!match || first < 1024 || last > 65535 || first > last)
    throw new Error(`SVC_KUBERNETES_GATEWAY_PORTS must be first-last between 1024 and 65535, not "${text}"`);
  return { first, last };
}

function wholeAtLeastOne(text: string | undefined, fallback: number, name: string): number {
  if (!text) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`${name} must be a whole number, at least 1, not "${text}"`);
  return value;
}
