// svc's programs inside a sandbox, and the argv that puts one in front of an agent: each is a
// self-contained file, bound read-only at the sandbox's bin as plain JavaScript (.mjs: ESM without a
// package.json), its types stripped once per process: a Node that loads TypeScript pays for a
// WebAssembly stripper on every start (~60 ms of CPU and ~25 MiB per program, on every run's path).
import { readFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SANDBOX_PATHS } from '../backends/bubblewrap.ts';
import type { LaunchSpec, SandboxProgram } from '../spec.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
/** svc's in-sandbox programs: self-contained TypeScript files (`source`), bound read-only as JavaScript at `target`. */
export const SANDBOX_PROGRAMS = {
  init: { source: join(HERE, 'sandbox-init.ts'), target: `${SANDBOX_PATHS.bin}/init.mjs` },
  finalizer: { source: join(HERE, 'finalizer.ts'), target: `${SANDBOX_PATHS.bin}/finalizer.mjs` },
  steering: { source: join(HERE, 'steering-relay.ts'), target: `${SANDBOX_PATHS.bin}/steer.mjs` },
  door: { source: join(HERE, 'preview-door.ts'), target: `${SANDBOX_PATHS.bin}/door.mjs` },
} as const satisfies Record<SandboxProgram, { source: string; target: string }>;

const strippedCode = new Map<string, string>();

/** A sandbox program's code as JavaScript (Node's own stripper, as `node x.ts` would run it), made once. */
export function sandboxProgramCode(program: SandboxProgram): string {
  let code = strippedCode.get(program);
  if (code === undefined) {
    code = stripTypeScriptTypes(readFileSync(SANDBOX_PROGRAMS[program].source, 'utf8'), { mode: 'strip' });
    strippedCode.set(program, code);
  }
  return code;
}

/** The socket a preview's door connects to, in the sandbox's socket directory (preview-expose.ts). */
export const DOOR_SOCKET = 'door.sock';

/** Whether this Node can be told to leave NODE_USE_ENV_PROXY alone (Node 24.5 and later). */
const ENV_PROXY_FLAG = process.allowedNodeEnvironmentFlags.has('--no-use-env-proxy');

/**
 * How one of svc's programs starts in a sandbox (the init, the steering relay, the door, a program
 * run as the sandbox's command): quiet, and, under svc's own Node, without the agent's
 * NODE_USE_ENV_PROXY. svc's programs talk to loopback alone (NO_PROXY), and that variable makes
 * Node load its HTTP client as it starts (with the sandbox's proxy variables: ~35 ms and ~17 MiB
 * per program, on every run's critical path). The agent they start still gets the variable: it is
 * the environment's, not the flag's. An image's Node may not know the flag (older than 24.5): it
 * keeps the variable.
 */
export function programNode(node: string): string[] {
  return node === process.execPath && ENV_PROXY_FLAG
    ? [node, '--no-warnings', '--no-use-env-proxy']
    : [node, '--no-warnings'];
}

/**
 * The agent's argv behind svc's program in front of it, if any: the steering relay (an agent that
 * takes steering on its input) or a preview's door. `at` is where programs are (source: svc's
 * checkout, unsandboxed; target: the sandbox's bin), `netDir` the socket directory as seen there.
 */
export function fronted(launch: LaunchSpec, node: string, at: 'source' | 'target', netDir: string, argv: string[]) {
  // No inspector on SIGUSR1: the agent may signal the relay (its own uid).
  if (launch.steering)
    return [...programNode(node), '--disable-sigusr1', SANDBOX_PROGRAMS.steering[at], launch.steering, ...argv];
  if (launch.door)
    return [
      ...programNode(node),
      '--disable-sigusr1',
      SANDBOX_PROGRAMS.door[at],
      join(netDir, DOOR_SOCKET),
      String(launch.door.port),
      ...argv,
    ];
  return argv;
}
