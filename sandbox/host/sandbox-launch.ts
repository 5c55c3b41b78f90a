// Turns what a runtime wants to run (argv, environment, the host workspace) into the launch a
// supervisor starts: under bubblewrap, the sandbox's directories, its network (proxy sockets,
// loopback ports inside, the run's callback routes) and an environment that names only sandbox
// paths and holds no svc credential; as a plain process (operator opt-in), the old launch.
import { chmodSync, chownSync, mkdirSync, writeFileSync } from 'node:fs';
import { clashes } from './bind-policy.ts';
import { homedir } from 'node:os';
import { basename, delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeEgressRule, type EgressRule } from '../../core/egress-rules.ts';
import { bubblewrapArgv, sandboxEtc, SANDBOX_PATHS } from '../backends/bubblewrap.ts';
import { sandboxFiles } from './files.ts';
import type { Isolation } from '../../platform/sandbox-settings.ts';
import { UNSANDBOXED_WARNING } from './isolation.ts';
import { NETWORK_SOCKETS } from '../network/sandbox-network.ts';
import { resolveToolchain } from './toolchain.ts';
import { CONTAINER_PATH, containerSandboxSpec } from '../backends/container/container-launch.ts';
import { podSandboxSpec } from '../backends/kubernetes/pod-launch.ts';
import { fronted, programNode, SANDBOX_PROGRAMS, sandboxProgramCode } from '../inside/programs.ts';
import type { LaunchSpec, SandboxLaunchRequest, SandboxLayout, SandboxListener, SandboxProgram } from '../spec.ts';

export { DOOR_SOCKET, SANDBOX_PROGRAMS } from '../inside/programs.ts';

const SVC_CHECKOUT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The built-in agents' CLIs, from svc's own installation: no PATH of the operator's needs to name them. */
export const SVC_AGENT_BIN = join(SVC_CHECKOUT, 'node_modules', '.bin');

const PROXY_VARIABLES = ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy'];
const SOCKS_VARIABLES = ['ALL_PROXY', 'all_proxy'];
const LOOPBACK_HOSTS = ['127.0.0.1', 'localhost', '::1'];

export interface SandboxNote {
  isolation: Isolation;
  /** The container image the run's agent ran in (container backend). */
  image?: string;
  egress?: string[];
  toolchain?: string[];
  refusedToolchain?: string[];
  warning?: string;
}

/** Where the sandbox finds its prompt (SVC_PROMPT_FILE). */
const PROMPT_PATH = '/run/svc/prompt';
/** A prompt longer than this is not put in SVC_PROMPT: one environment string may hold 128 KiB at most. */
const PROMPT_ENV_MAX = 32 * 1024;

/**
 * The prompt as a file (SVC_PROMPT_FILE), readable by the sandbox: prompts up to the API's body
 * limit reach the agent. SVC_PROMPT keeps a short prompt too, for agents that read only that.
 * Answers the host file written, or null when there is no prompt.
 */
function promptAsFile(env: Record<string, string>, hostPath: string, sandboxPath: string): string | null {
  const prompt = env.SVC_PROMPT;
  if (prompt === undefined) return null;
  writeFileSync(hostPath, prompt);
  chmodSync(hostPath, 0o644);
  env.SVC_PROMPT_FILE = sandboxPath;
  if (Buffer.byteLength(prompt) > PROMPT_ENV_MAX) delete env.SVC_PROMPT;
  return hostPath;
}

function ownedDir(path: string, hostId: number | null): string {
  mkdirSync(path, { recursive: true, mode: 0o700 });
  if (hostId !== null) chownSync(path, hostId, hostId);
  return path;
}

/** Ports inside the sandbox: forwarded endpoints keep theirs; the proxies take the first free of theirs. */
function freePortFrom(preferred: number, taken: Set<number>): number {
  let port = preferred;
  while (taken.has(port)) port += 1;
  taken.add(port);
  return port;
}

export function sandboxLaunch(request: SandboxLaunchRequest): { spec: LaunchSpec; note: SandboxNote } {
  const { launch, dir, hostId } = request;
  if (request.isolation === 'process') {
    const env: Record<string, string> = {
      ...launch.env,
      PATH: [SVC_AGENT_BIN, ...(launch.env.PATH ? [launch.env.PATH] : [])].join(delimiter),
      HOME: ownedDir(request.home ?? join(dir, 'home'), null),
      TMPDIR: ownedDir(join(dir, 'tmp'), null),
    };
    if (request.callback)
      Object.assign(env, { SVC_BASE_URL: request.callback.baseUrl, SVC_API_TOKEN: request.callback.token });
    if (request.outbox) env.SVC_OUTBOX = ownedDir(request.outbox, null);
    promptAsFile(env, join(dir, 'prompt'), join(dir, 'prompt'));
    const argv = request.program
      ? [...programNode(process.execPath), SANDBOX_PROGRAMS[request.program].source]
      : fronted(launch, process.execPath, 'source', sandboxFiles(dir).net, launch.argv);
    return { spec: { ...launch, argv, env }, note: { isolation: 'process', warning: UNSANDBOXED_WARNING } };
  }
  const files = sandboxFiles(dir);
  const etcDir = join(dir, 'sandbox-files');
  mkdirSync(etcDir, { recursive: true, mode: 0o755 });
  // In a container the agent is the run's host uid itself (no user namespace of svc's making).
  const etc = sandboxEtc(
    request.isolation === 'container' && hostId !== null ? hostId : undefined,
    request.services?.names,
  );
  for (const [name, content] of Object.entries(etc)) {
    writeFileSync(join(etcDir, name), content);
    // Public knowledge, read by the agent's uid (svc's umask would make it 0600).
    chmodSync(join(etcDir, name), 0o644);
  }
  // A container or pod brings its own toolchain (the image); a bubblewrap sandbox sees the host's.
  const toolchain = ['container', 'kubernetes'].includes(request.isolation)
    ? null
    : resolveToolchain({
        command: launch.argv[0] ?? 'true',
        trustCommand: request.trustCommand,
        hostPath: process.env.PATH,
        svcBin: SVC_AGENT_BIN,
        agentPath: launch.env.PATH,
        extra: request.settings.toolchain,
        forbidden: request.forbidden,
        enclosing: [SVC_CHECKOUT, homedir()],
      });
  const { listeners, callbackAddress, env } = sandboxNetworkEnv(request);
  env.PATH = toolchain?.path ?? CONTAINER_PATH;

  // Copies the agent's uid can read, whatever the checkout's own modes.
  const programs: { source: string; target: string }[] = (
    [
      'init',
      ...(request.program ? [request.program] : []),
      ...(!request.program && launch.protocol === 'acp' ? ['acp'] : []),
      ...(!request.program && launch.steering ? ['steering'] : []),
      // A pod's preview needs no door: its Service reaches the server on the pod's address.
      ...(!request.program && launch.door && request.isolation !== 'kubernetes' ? ['door'] : []),
    ] as SandboxProgram[]
  ).map((program) => {
    const { target } = SANDBOX_PROGRAMS[program];
    const copy = join(etcDir, basename(target));
    writeFileSync(copy, sandboxProgramCode(program));
    chmodSync(copy, 0o644);
    return { source: copy, target };
  });
  const prompt = promptAsFile(env, join(etcDir, 'prompt'), PROMPT_PATH);
  if (prompt) programs.push({ source: prompt, target: PROMPT_PATH });
  const binds = request.settings.binds.filter((bind) => !clashes(bind.source, request.forbidden));
  const refusedBinds = request.settings.binds
    .filter((bind) => clashes(bind.source, request.forbidden))
    .map((bind) => `${bind.source}: would show svc's own data`);
  const layout: SandboxLayout = {
    workspace: launch.cwd,
    home: ownedDir(request.home ?? join(dir, 'home'), hostId),
    tmp: ownedDir(join(dir, 'tmp'), hostId),
    etcFiles: Object.keys(etc).map((name) => ({ source: join(etcDir, name), target: `/etc/${name}` })),
    programs,
    socketDir: files.net,
    outbox: request.outbox ? ownedDir(request.outbox, hostId) : null,
    toolchain: toolchain?.dirs ?? [],
    binds,
  };
  const network = {
    socketDir: files.net,
    rules: request.egress,
    callback: request.callback,
    callbackAddress,
    refusalLog: files.refusals,
  };
  const note: SandboxNote = {
    isolation: request.isolation,
    egress: request.egress.map(describeEgressRule),
    ...(toolchain ? { toolchain: toolchain.dirs } : {}),
    ...(toolchain?.refused.length || refusedBinds.length
      ? { refusedToolchain: [...(toolchain?.refused ?? []), ...refusedBinds] }
      : {}),
  };
  if (!toolchain) {
    // The image's Node runs svc's programs; the agent's command is resolved on the image's PATH.
    const command = request.program
      ? [...programNode('node'), SANDBOX_PROGRAMS[request.program].target]
      : fronted(
          request.isolation === 'kubernetes' ? { ...launch, door: null } : launch,
          'node',
          'target',
          SANDBOX_PATHS.net,
          launch.argv,
        );
    if (request.isolation === 'kubernetes') {
      const pod = podSandboxSpec({ request, layout, command, env, listeners, harness: sandboxProgramCode('init') });
      const image = pod.manifest.spec!.containers[0]!.image!;
      return { spec: { ...launch, argv: command, env, network, pod }, note: { ...note, image } };
    }
    const init = [...programNode('node'), SANDBOX_PROGRAMS.init.target, JSON.stringify(listeners), ...command];
    const stdinFile = launch.stdin === null ? null : join(etcDir, 'stdin');
    const spec = containerSandboxSpec({ request, layout, command: init, env, stdinFile });
    return { spec: { ...launch, argv: init, env, network, container: spec }, note: { ...note, image: spec.image } };
  }
  const command = request.program
    ? [...programNode(process.execPath), SANDBOX_PROGRAMS[request.program].target]
    : fronted(launch, process.execPath, 'target', SANDBOX_PATHS.net, [toolchain.command, ...launch.argv.slice(1)]);
  const argv = bubblewrapArgv(
    layout,
    [...programNode(process.execPath), SANDBOX_PROGRAMS.init.target, JSON.stringify(listeners), ...command],
    { dieWithParent: request.dieWithParent, hostId, maxProcesses: request.settings.maxProcesses },
  );
  return { spec: { ...launch, argv, env, network }, note };
}

/**
 * The sandbox's loopback listeners (proxies, the callback routes, forwarded loopback endpoints) and
 * the environment that points the agent at them: no svc credential, only sandbox paths.
 */
function sandboxNetworkEnv(request: SandboxLaunchRequest) {
  // Loopback endpoints on the allowlist (a local model server) keep their address inside: a port
  // there tunnels to them through the proxy, so a client that skips proxies for loopback works too.
  // A preview's own port is its server's: the proxies take others.
  // The run's services listen on the same loopback: their ports are theirs too.
  const taken = new Set<number>([
    ...(request.launch.door ? [request.launch.door.port] : []),
    ...(request.services?.ports ?? []),
  ]);
  // One listener per address: `localhost:N` and `127.0.0.1:N` are one port inside; the first rule's is kept.
  const inside = (host: string) => (host === '::1' ? '::1' : '127.0.0.1');
  const seen = new Set<string>();
  const forwards: { rule: EgressRule; port: number }[] = [];
  for (const rule of request.egress) {
    if (!LOOPBACK_HOSTS.includes(rule.host) || rule.source === 'project' || rule.ports === '*') continue;
    for (const port of rule.ports) {
      if (seen.has(`${inside(rule.host)} ${port}`)) continue;
      seen.add(`${inside(rule.host)} ${port}`);
      forwards.push({ rule, port });
    }
  }
  const socket = (name: keyof typeof NETWORK_SOCKETS) => `${SANDBOX_PATHS.net}/${NETWORK_SOCKETS[name]}`;
  const listeners: (SandboxListener & { socket: string })[] = forwards.map(({ rule, port }) => {
    taken.add(port);
    return {
      host: inside(rule.host),
      port,
      socket: socket('http'),
      connect: `${rule.host === '::1' ? '[::1]' : rule.host}:${port}`,
    };
  });
  const httpPort = freePortFrom(3128, taken);
  const socksPort = freePortFrom(1080, taken);
  listeners.push(
    { host: '127.0.0.1', port: httpPort, socket: socket('http') },
    { host: '127.0.0.1', port: socksPort, socket: socket('socks') },
  );
  const env: Record<string, string> = { ...request.launch.env };
  for (const name of ['SVC_API_TOKEN', 'SVC_BASE_URL', 'GIT_CONFIG_GLOBAL', 'GIT_CONFIG_NOSYSTEM']) delete env[name];
  let callbackAddress: string | null = null;
  if (request.callback) {
    const callbackPort = freePortFrom(7780, taken);
    listeners.push({ host: '127.0.0.1', port: callbackPort, socket: socket('callback') });
    callbackAddress = `127.0.0.1:${callbackPort}`;
    env.SVC_BASE_URL = `http://${callbackAddress}`;
  }
  for (const name of PROXY_VARIABLES) env[name] = `http://127.0.0.1:${httpPort}`;
  // Loopback is the sandbox's own: its ports lead to the callback routes and forwarded endpoints.
  // So are the run's services' names.
  for (const name of ['NO_PROXY', 'no_proxy'])
    env[name] = ['localhost', '127.0.0.1', '::1', ...(request.services?.names ?? [])].join(',');
  for (const name of SOCKS_VARIABLES) env[name] = `socks5h://127.0.0.1:${socksPort}`;
  Object.assign(env, {
    NODE_USE_ENV_PROXY: '1',
    HOME: SANDBOX_PATHS.home,
    TMPDIR: SANDBOX_PATHS.tmp,
    USER: 'agent',
    LOGNAME: 'agent',
    SHELL: '/bin/bash',
    SVC_WORKSPACE: SANDBOX_PATHS.workspace,
  });
  if (request.outbox) env.SVC_OUTBOX = SANDBOX_PATHS.outbox;
  return { listeners, callbackAddress, env };
}
