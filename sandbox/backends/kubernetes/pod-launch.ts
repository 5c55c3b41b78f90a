// The Kubernetes backend's boundary, as a Pod manifest: the agent image's read-only root, empty
// volumes for the workspace, home, /tmp and svc's files (filled through the run's gateway, handed
// back the same way), a non-root uid, every capability dropped, no privilege escalation, the
// runtime's default seccomp profile, no service-account token, no service links. The harness
// (sandbox-init.ts) is the pod's program, passed in the manifest, so image and svc never disagree.
// A run's services (core/environment-services.ts) are more containers of the same pod, under the
// same hardening: they share its loopback, their names lead there (`hostAliases`), and the harness
// waits for them before it starts the agent.
import type { V1Container, V1EnvVar, V1Pod } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SANDBOX_PATHS, SANDBOX_INNER_ID } from '../bubblewrap.ts';
import type { PodDefaults } from '../../../platform/sandbox-settings.ts';
import type { ProjectPodSettings } from '../../../core/svc-config.schema.ts';
import { NETWORK_SOCKETS } from '../../network/sandbox-network.ts';
import { runShares, type ServicePlan } from '../../../core/environment-services.ts';
import { POD_LABELS, RUN_ANNOTATION } from './kube-api.ts';
import type {
  GatewayPart,
  PodServiceWait,
  PodSpec,
  SandboxLayout,
  SandboxLaunchRequest,
  SandboxListener,
} from '../../spec.ts';

/** svc's files in the pod: programs, prompt, stdin (one volume, filled at start). */
const RUN_DIR = '/run/svc';

/** A DNS-1123 name for the sandbox's pod: `svc-run-<id>` (`_` is not allowed there). */
export function podName(sandboxName: string): string {
  return `svc-${sandboxName.replace(/_/g, '-').toLowerCase()}`;
}

/** The longest a run pod may live: a supervisor's activity gives up after as long (7 days). */
const POD_LIFETIME_SECONDS = 7 * 24 * 3600;

/** The harness's environment variable that carries the gateway; filled in by the supervisor. */
export const POD_CONFIG_VARIABLE = 'SVC_INIT_POD';
/** The harness's environment variable that names the services it waits for (`PodServiceWait[]`). */
export const POD_SERVICES_VARIABLE = 'SVC_INIT_SERVICES';
/** A pod container's name for a service (the agent's is `agent`). */
export const serviceContainerName = (name: string) => `service-${name}`;

export function podSandboxSpec({
  request,
  layout,
  command,
  env,
  listeners,
  harness,
}: {
  request: SandboxLaunchRequest;
  layout: SandboxLayout;
  /** The agent's argv, as the image resolves it. */
  command: string[];
  env: Record<string, string>;
  listeners: (SandboxListener & { socket: string })[];
  /** svc's harness (sandbox-init.ts, as JavaScript): the pod's program. */
  harness: string;
}): PodSpec {
  const settings = request.settings.kubernetes;
  if (!settings.gatewayHost)
    throw new Error(
      'SVC_SANDBOX=kubernetes needs SVC_KUBERNETES_GATEWAY_HOST (or POD_IP): where pods reach this worker',
    );
  const name = podName(request.name);
  // The pod's own copy of svc's files: its programs, its prompt, its stdin.
  const filesDir = join(request.dir, 'pod-files');
  mkdirSync(join(filesDir, 'bin'), { recursive: true });
  // Read by the run's uid (svc's own umask would make them svc's alone).
  for (const dir of [filesDir, join(filesDir, 'bin')]) chmodSync(dir, 0o755);
  for (const program of layout.programs) {
    const target = join(filesDir, program.target.slice(RUN_DIR.length + 1));
    copyFileSync(program.source, target);
    chmodSync(target, 0o644);
  }
  const services = request.services?.plans ?? [];
  const environment: Record<string, string> = { ...env, SVC_INIT_GROUP: '1' };
  if (services.length) environment[POD_SERVICES_VARIABLE] = JSON.stringify(services.map(serviceWait));
  if (request.launch.stdin !== null) {
    writeFileSync(join(filesDir, 'stdin'), request.launch.stdin);
    chmodSync(join(filesDir, 'stdin'), 0o644);
    environment.SVC_INIT_STDIN = `${RUN_DIR}/stdin`;
  }
  // In this order: the outbox (what svc waits for) goes back first.
  const parts: Record<string, GatewayPart> = {
    files: { dir: filesDir, in: true, out: false },
    ...(layout.outbox ? { outbox: { dir: layout.outbox, in: false, out: true } } : {}),
    workspace: { dir: layout.workspace, in: true, out: true },
    home: { dir: layout.home, in: true, out: true },
  };
  const podDirs: Record<string, string> = {
    files: RUN_DIR,
    workspace: SANDBOX_PATHS.workspace,
    home: SANDBOX_PATHS.home,
    outbox: SANDBOX_PATHS.outbox,
  };
  const channels = Object.entries(NETWORK_SOCKETS);
  const podListeners = listeners.map(({ socket, ...listener }) => ({
    ...listener,
    channel: channels.find(([, file]) => socket.endsWith(`/${file}`))![0],
  }));
  const securityContext: V1Container['securityContext'] = {
    allowPrivilegeEscalation: false,
    privileged: false,
    readOnlyRootFilesystem: true,
    runAsNonRoot: true,
    capabilities: { drop: ['ALL'] },
  };
  const container: V1Container = {
    name: 'agent',
    image: request.image || request.settings.container.image,
    imagePullPolicy: 'IfNotPresent',
    // `node -e` puts its arguments from argv[1]: a placeholder keeps the harness's argv[2] its own.
    command: ['node', '--no-warnings', '--input-type=module', '-e', harness, 'svc-init'],
    args: [JSON.stringify(podListeners), ...command],
    env: [
      ...Object.entries(environment).map(([key, value]): V1EnvVar => ({ name: key, value })),
      ...(podSettings(settings.podDefaults, request.projectPod ?? null).secretEnv ?? []).map((entry): V1EnvVar => ({
        name: entry.name,
        valueFrom: { secretKeyRef: { name: entry.secret, key: entry.key } },
      })),
    ],
    workingDir: SANDBOX_PATHS.workspace,
    // A preview's server listens on the pod's address; its Service (preview-service.ts) leads there.
    ...(request.launch.door ? { ports: [{ name: 'preview', containerPort: request.launch.door.port }] } : {}),
    resources: podResources(request, 'agent', services.length),
    securityContext,
    volumeMounts: [
      { name: 'workspace', mountPath: SANDBOX_PATHS.workspace },
      { name: 'home', mountPath: SANDBOX_PATHS.home },
      { name: 'tmp', mountPath: SANDBOX_PATHS.tmp },
      { name: 'svc', mountPath: RUN_DIR },
    ],
  };
  const defaults = podSettings(settings.podDefaults, request.projectPod ?? null);
  const manifest: V1Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: settings.namespace,
      labels: {
        [POD_LABELS.managedBy]: 'svc',
        [POD_LABELS.sandbox]: name,
        ...(request.launch.door ? { [POD_LABELS.preview]: 'true' } : {}),
      },
      annotations: { [RUN_ANNOTATION]: request.name },
    },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      // Time to hand the workspace back after a stop, before the kubelet's SIGKILL.
      terminationGracePeriodSeconds: 30,
      // A backstop: a pod whose supervisors all died ends anyway (svc's stop lowers it to 1 s).
      activeDeadlineSeconds: POD_LIFETIME_SECONDS,
      securityContext: {
        runAsNonRoot: true,
        // The run's own uid (as in a container): two runs on one node share no uid, as a second wall.
        runAsUser: request.hostId ?? SANDBOX_INNER_ID,
        runAsGroup: request.hostId ?? SANDBOX_INNER_ID,
        fsGroup: request.hostId ?? SANDBOX_INNER_ID,
        // svc's own profile where the operator installed it on the nodes (no ptrace, no namespaces).
        seccompProfile: settings.seccompProfile
          ? { type: 'Localhost', localhostProfile: settings.seccompProfile }
          : { type: 'RuntimeDefault' },
      },
      containers: [
        container,
        ...services.map((service) => serviceContainer(request, service, services.length, securityContext)),
      ],
      ...(services.length
        ? { hostAliases: [{ ip: '127.0.0.1', hostnames: services.map((service) => service.name) }] }
        : {}),
      // Bounded as a hand-back is: a pod cannot fill its node's disk.
      volumes: ['workspace', 'home', 'tmp', 'svc', ...services.map((service) => serviceTmp(service.name))].map(
        (volume) => ({ name: volume, emptyDir: { sizeLimit: `${settings.handBackMaxMiB}Mi` } }),
      ),
      ...(defaults.nodeSelector ? { nodeSelector: defaults.nodeSelector } : {}),
      ...(defaults.tolerations ? { tolerations: defaults.tolerations } : {}),
      ...(defaults.serviceAccountName ? { serviceAccountName: defaults.serviceAccountName } : {}),
      ...(defaults.runtimeClassName ? { runtimeClassName: defaults.runtimeClassName } : {}),
      ...(defaults.imagePullSecrets
        ? { imagePullSecrets: defaults.imagePullSecrets.map((secret) => ({ name: secret })) }
        : {}),
    },
  };
  const sync = (direction: 'in' | 'out') =>
    Object.entries(parts)
      .filter(([, part]) => part[direction])
      .map(([part]) => ({ part, dir: podDirs[part]! }));
  return {
    name,
    namespace: settings.namespace,
    kubeconfig: settings.kubeconfig,
    manifest,
    gateway: {
      host: settings.gatewayHost,
      bind: settings.gatewayBind,
      ports: settings.gatewayPorts,
      token: randomBytes(24).toString('base64url'),
      parts,
      syncIn: sync('in'),
      syncOut: sync('out'),
      hostId: request.hostId,
      maxBytes: settings.handBackMaxMiB * 1024 * 1024,
    },
    unreachableAfterMs: settings.unreachableAfterMs,
    memoryLimitMiB: request.memoryLimitMiB ?? null,
  };
}

function serviceWait(service: ServicePlan): PodServiceWait {
  const { readiness } = service;
  // A command check runs in the service's container, which the harness cannot enter: refused earlier.
  if (readiness && 'command' in readiness)
    throw new Error(`service ${service.name}: a readiness command is not supported on Kubernetes (use tcp)`);
  return { name: service.name, port: readiness?.tcp ?? null, timeoutMs: service.readyTimeoutMs };
}

const serviceTmp = (name: string) => `service-${name}-tmp`;

/**
 * A service as a container of the run's pod: the agent's hardening (the pod's uid, every capability
 * dropped, no privilege escalation, the pod's seccomp profile, a read-only root), its share of the run's limits,
 * a /tmp of its own, and only the env its file names.
 */
function serviceContainer(
  request: SandboxLaunchRequest,
  service: ServicePlan,
  services: number,
  securityContext: V1Container['securityContext'],
): V1Container {
  const env = { HOME: '/tmp', ...service.env };
  return {
    name: serviceContainerName(service.name),
    image: service.image,
    imagePullPolicy: 'IfNotPresent',
    // The image's own entry point, with these arguments (as on the container backend).
    ...(service.command ? { args: service.command } : {}),
    env: Object.entries(env).map(([name, value]): V1EnvVar => ({ name, value })),
    ...(service.ports.length ? { ports: service.ports.map((port) => ({ containerPort: port })) } : {}),
    resources: podResources(request, 'service', services),
    securityContext,
    volumeMounts: [{ name: serviceTmp(service.name), mountPath: SANDBOX_PATHS.tmp }],
  };
}

/**
 * One container's limits (and requests, the same): its share of the run's (core/environment-services.ts),
 * so the pod's containers together ask for and may use no more than the run's limits.
 */
function podResources(request: SandboxLaunchRequest, container: 'agent' | 'service', services: number) {
  const share = (limit: number | null | undefined) => runShares(limit ?? null, services)[container];
  const memory = share(request.memoryLimitMiB);
  const cpu = share(request.cpuMillicores);
  const limits: Record<string, string> = {};
  if (memory) limits.memory = `${memory}Mi`;
  if (cpu) limits.cpu = `${cpu}m`;
  return Object.keys(limits).length ? { limits, requests: { ...limits } } : {};
}

/**
 * The operator's pod settings with the project's own: the operator's node selector keys win, the
 * tolerations add up, and a project's service account and Secrets count only where the operator
 * lets projects name them (`projectsMay`); anything else a repository names is dropped.
 */
export function podSettings(operator: PodDefaults, project: ProjectPodSettings | null): PodDefaults {
  if (!project) return operator;
  const secrets = new Set(operator.projectsMay?.secrets ?? []);
  const accounts = new Set(operator.projectsMay?.serviceAccounts ?? []);
  const nodeSelector = { ...project.nodeSelector, ...operator.nodeSelector };
  const tolerations = [...(operator.tolerations ?? []), ...(project.tolerations ?? [])];
  const secretEnv = [
    ...(operator.secretEnv ?? []),
    ...(project.secretEnv ?? []).filter((entry) => secrets.has(entry.secret)),
  ];
  const account =
    project.serviceAccountName && accounts.has(project.serviceAccountName)
      ? project.serviceAccountName
      : operator.serviceAccountName;
  return {
    ...operator,
    ...(Object.keys(nodeSelector).length ? { nodeSelector } : {}),
    ...(tolerations.length ? { tolerations } : {}),
    ...(secretEnv.length ? { secretEnv } : {}),
    ...(account ? { serviceAccountName: account } : {}),
  };
}
