// The shapes the sandbox's parts share: what a launch asks for, the records a supervisor leaves,
// what each backend and the network are handed. A leaf: types from core/ and platform/ only, so any
// module of the package (or an in-sandbox program, whose type imports vanish when it is stripped)
// may import it without a cycle.
import type { V1Pod } from '@kubernetes/client-node';
import type { EgressRule } from '../core/egress-rules.ts';
import type { ServiceFailure, ServicePlan } from '../core/environment-services.ts';
import type { ProjectPodSettings } from '../core/svc-config.schema.ts';
import type { Bind, Isolation, SandboxSettings } from '../platform/sandbox-settings.ts';

/** svc's programs inside a sandbox (inside/): the init, the finalizer, the steering relay, the ACP client, a door. */
export type SandboxProgram = 'init' | 'finalizer' | 'steering' | 'acp' | 'door';

/** The input protocols the steering relay speaks; the runtime adapter names one in its launch. */
export type SteeringFormat = 'claude-stream-json';

export interface LaunchSpec {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  stdin: string | null;
  /** The agent takes steering on its input in this format: svc's relay holds its stdin (steering-relay.ts). */
  steering?: SteeringFormat | null;
  /** The agent speaks this protocol: svc's client drives it (inside/acp-client.ts). */
  protocol?: 'acp' | null;
  /** The memory cgroup the agent runs in (the supervisor joins it before exec). */
  memoryCgroup?: MemoryCgroup | null;
  /** The sandbox's proxies, started by the supervisor before the launch (bubblewrap only). */
  network?: NetworkSpec | null;
  /** Stop the launch after this long (the finalizer: agent-configured git may try to run for ever). */
  maxLifetimeMs?: number | null;
  /** Set for the container backend: the supervisor runs this container instead of spawning argv. */
  container?: ContainerSpec | null;
  /** Set for the Kubernetes backend: the supervisor runs this pod, and the run's gateway for it. */
  pod?: PodSpec | null;
  /** A preview: the port its door (preview-door.ts) listens behind; the supervisor serves it (preview-expose.ts). */
  door?: { port: number } | null;
  expose?: ExposeSpec | null;
  /**
   * The names in `env` whose values are the project's secrets: masked in the sandbox's output as
   * launched, even when a secret is changed or removed while the sandbox runs.
   */
  secretNames?: string[] | null;
}

export interface SandboxLaunchRequest {
  /** The sandbox's directory on the host (its records, home, tmp, sockets). */
  dir: string;
  /** What the runtime (or the finalizer) asks to run; `cwd` is the host workspace. */
  launch: LaunchSpec;
  isolation: Isolation;
  settings: SandboxSettings;
  /** The unprivileged host uid the sandbox runs as (svc is root), or null. */
  hostId: number | null;
  /** Egress allowlist (bubblewrap) and the run's callback target; null target: no callbacks. */
  egress: EgressRule[];
  callback: CallbackTarget | null;
  /** In-sandbox program to run instead of launch.argv[0] resolution (the finalizer). */
  program?: SandboxProgram;
  /** The sandbox's home, when it is another sandbox's of the run (an environment's setup leaves its caches there). */
  home?: string | null;
  /** A writable hand-over directory (the finalizer's bundle). */
  outbox?: string | null;
  dieWithParent: boolean;
  /** Directories no sandbox may see (data directory, project clones). */
  forbidden: string[];
  /** Whether the command's own directory may be bound (an operator's agent; not a project's). */
  trustCommand: boolean;
  /** The sandbox's name (`<runId>`, `<runId>-finalize`): a container is called `svc-<name>`. */
  name: string;
  /** The project's own `agentImage` and CPU limit (container backend). */
  image?: string | null;
  cpuMillicores?: number | null;
  /** The run's memory limit: a container asks it of the engine when svc cannot make the cgroup. */
  memoryLimitMiB?: number | null;
  /** What the worker knows of its container engine. */
  engineFacts?: EngineFacts | null;
  /** The project's pod settings (Kubernetes backend), within what the operator allows projects. */
  projectPod?: ProjectPodSettings | null;
  /** The run's services: the agent shares their loopback and knows their names. */
  services?: SandboxServices | null;
}

/**
 * What an agent's sandbox needs of the run's services: their names, their ports, the holder of
 * their network (container backend), and the services themselves (a pod runs them beside the agent).
 */
export interface SandboxServices {
  holder: string;
  names: string[];
  ports: number[];
  plans: ServicePlan[];
}

/** What a pod's harness waits for of one service: its port accepting on the pod's loopback, within its bound. */
export interface PodServiceWait {
  name: string;
  /** Null: the service has no port to wait for; its start is enough. */
  port: number | null;
  timeoutMs: number;
}

export interface SandboxLayout {
  /** Host directories, bound writable at SANDBOX_PATHS.workspace, .home and .tmp. */
  workspace: string;
  home: string;
  tmp: string;
  /** Files svc writes for the sandbox's /etc: passwd, group, hosts. */
  etcFiles: { source: string; target: string }[];
  /** svc's in-sandbox programs, read-only under SANDBOX_PATHS.bin. */
  programs: { source: string; target: string }[];
  /** The proxies' socket directory (SANDBOX_PATHS.net), when the sandbox has a network. */
  socketDir: string | null;
  /** Writable hand-over directory (SANDBOX_PATHS.outbox): the finalizer leaves its bundle there. */
  outbox: string | null;
  /** Host directories of the agent's toolchain (Node, the agent CLI), read-only at their own path. */
  toolchain: string[];
  /** Operator binds (SVC_SANDBOX_BINDS). */
  binds: Bind[];
}

/**
 * A loopback port inside the sandbox (sandbox-init.ts opens it): its connections go to a proxy's
 * unix socket (local sandboxes) or a gateway channel (pods).
 */
export interface SandboxListener {
  host: string;
  port: number;
  /** The unix socket a connection goes to (local sandboxes). */
  socket?: string;
  /** The gateway channel a connection goes to (pods). */
  channel?: string;
  /** Set for a forwarded endpoint: open a CONNECT tunnel to it through the HTTP proxy first. */
  connect?: string;
}

/** A pod's way to svc (SVC_INIT_POD): the run's gateway (host:port), its token, and what moves in and out. */
export interface PodConfig {
  gateway: string;
  token: string;
  syncIn: { part: string; dir: string }[];
  syncOut: { part: string; dir: string }[];
}

export interface SupervisorRecord {
  pid: number;
  startTime: string | null;
  /** The worker host's shared supervisor (supervisor-host.ts), which outlives this sandbox. */
  shared?: boolean;
}

export interface AgentRecord {
  /** The agent's host pid (a container's: its init process). */
  pid: number;
  /** The container the agent runs in (container backend). */
  containerId?: string;
  /** The pod the agent runs in (Kubernetes backend): namespace/name. */
  pod?: string;
  startTime: string | null;
  spawnedAt: string;
}

export interface ExitRecord {
  exitCode: number | null;
  signal: string | null;
  spawnError: { code: string; message: string } | null;
  stoppedBySvc: boolean;
  /** The kernel OOM-killed a process of the sandbox's memory cgroup. */
  oomKilled?: boolean;
  /** The backend lost the sandbox: it disappeared, its backend stopped answering, or the cluster evicted it. */
  loss?: 'vanished' | 'unreachable' | 'evicted';
  /** What the backend said about the end (the kubelet's eviction message). */
  detail?: string;
  /** A pod ended without handing its workspace back: its work is not in svc's copy. */
  notHandedBack?: boolean;
  /** A pod's harness gave up on one of the run's services: which, why, and that container's last lines. */
  serviceFailure?: ServiceFailure;
  endedAt: string;
}

/** How a backend's sandbox ended, before the supervisor adds whether svc stopped it. */
export type BackendExit = Omit<ExitRecord, 'stoppedBySvc'>;

export interface MemoryCgroup {
  path: string;
  version: 1 | 2;
  limitMiB: number;
}

export interface NetworkSpec {
  /** Host directory holding the sockets; bound into the sandbox at SANDBOX_PATHS.net. */
  socketDir: string;
  rules: EgressRule[];
  callback: CallbackTarget | null;
  /** Where refusals are appended (JSON lines), outside the sandbox's reach. */
  refusalLog: string;
  /** The sandbox-local host:port of the callback routes (SVC_BASE_URL), for clients that proxy loopback too. */
  callbackAddress?: string | null;
}

export interface CallbackTarget {
  /** The API base URL as the worker reaches it (SVC_API_URL, or the API this process serves). */
  baseUrl: string;
  runId: string;
  /** The run's own token (svc1.<run id>.<hmac>), added to every forwarded request. */
  token: string;
}

/** What the supervisor asks the engine for. */
export interface ContainerSpec {
  /** The Engine API address (SVC_CONTAINER_ENGINE). */
  engine: string;
  /** `svc-<runId>` or `svc-<runId>-finalize`: at most one container per sandbox, found again by name. */
  name: string;
  image: string;
  /** The memory limit to ask of the engine when svc cannot make the run's memory cgroup itself. */
  memoryLimitMiB: number | null;
  /** How long the engine may not answer before the sandbox is `sandbox_unreachable`. */
  unreachableAfterMs: number;
  /** What the worker knew of the engine (the supervisor asks itself when this is null). */
  engineFacts: EngineFacts | null;
  body: ContainerCreateBody;
}

/** What svc asks a container to be (the Engine API's create body, the fields svc sets). */
export interface ContainerCreateBody {
  Image: string;
  Entrypoint: string[];
  Cmd: string[];
  Env: string[];
  User: string;
  WorkingDir: string;
  StopSignal: string;
  Healthcheck: { Test: ['NONE'] };
  Labels: Record<string, string>;
  HostConfig: {
    /** No network but loopback; a run with services joins the namespace their holder keeps (container-services.ts). */
    NetworkMode: 'none' | `container:${string}`;
    CapDrop: ['ALL'];
    SecurityOpt: string[];
    ReadonlyRootfs: boolean;
    Binds: string[];
    Tmpfs: Record<string, string>;
    Memory?: number;
    MemorySwap?: number;
    CgroupParent?: string;
    NanoCpus?: number;
    PidsLimit: number;
    Ulimits: { Name: string; Soft: number; Hard: number }[];
    Runtime?: string;
    Init?: boolean;
    CgroupnsMode?: 'private' | 'host';
    LogConfig: { Type: 'json-file'; Config: Record<string, string> };
  };
}

/** A service's create body: the image's own entry point and working directory, its command or the image's. */
export type ServiceCreateBody = Omit<ContainerCreateBody, 'Entrypoint' | 'Cmd' | 'WorkingDir'> & { Cmd?: string[] };

export interface EngineFacts {
  podman: boolean;
  /** `cgroupfs` (a cgroup path can be a container's parent) or `systemd` (a slice name only). */
  cgroupDriver: string | null;
}

/** What the supervisor needs to run the sandbox as a pod. */
export interface PodSpec {
  name: string;
  namespace: string;
  kubeconfig: string | null;
  /** The manifest, but for the harness's gateway address (the supervisor's port, known once it listens). */
  manifest: V1Pod;
  gateway: {
    host: string;
    bind: string;
    ports: { first: number; last: number };
    token: string;
    parts: Record<string, GatewayPart>;
    syncIn: { part: string; dir: string }[];
    syncOut: { part: string; dir: string }[];
    hostId: number | null;
    maxBytes: number;
  };
  unreachableAfterMs: number;
  /** The run's memory limit (the finalizer's pod gets the agent's). */
  memoryLimitMiB: number | null;
}

/** A directory a pod receives (`in`), hands back (`out`), or both. */
export interface GatewayPart {
  dir: string;
  in: boolean;
  out: boolean;
}

export interface ExposeSpec {
  /** The socket the door connects to, as this host sees it (in the sandbox's socket directory). */
  doorSocket: string;
  /** The address the preview is served on (SVC_PREVIEW_BIND). */
  bind: string;
  firstPort: number;
  lastPort: number;
  /** Where the port taken (or why none could be) is written: {port} or {error, message}. */
  record: string;
}

export type ExposeRecord = { port: number } | { error: 'port_exhausted'; message: string };
