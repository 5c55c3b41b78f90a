// svc's programs inside a sandbox, and the argv that puts one in front of an agent. Each is bound
// read-only at the sandbox's bin as one plain JavaScript file (.mjs: ESM without a package.json),
// made once per process: its types stripped (a Node that loads TypeScript pays for a WebAssembly
// stripper on every start: ~60 ms of CPU and ~25 MiB per program, on every run's path) and the few
// helpers it shares with the others (wire.ts) bundled in, since nothing else of svc is visible in a
// sandbox (and a pod's init is passed as a single string).
import { readFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SANDBOX_PATHS } from '../backends/bubblewrap.ts';
import type { LaunchSpec, SandboxProgram } from '../spec.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
/** svc's in-sandbox programs: TypeScript entry points (`source`), bound read-only as one JavaScript file (`target`). */
export const SANDBOX_PROGRAMS = {
  init: { source: join(HERE, 'sandbox-init.ts'), target: `${SANDBOX_PATHS.bin}/init.mjs` },
  finalizer: { source: join(HERE, 'finalizer.ts'), target: `${SANDBOX_PATHS.bin}/finalizer.mjs` },
  steering: { source: join(HERE, 'steering-relay.ts'), target: `${SANDBOX_PATHS.bin}/steer.mjs` },
  acp: { source: join(HERE, 'acp-client.ts'), target: `${SANDBOX_PATHS.bin}/acp.mjs` },
  door: { source: join(HERE, 'preview-door.ts'), target: `${SANDBOX_PATHS.bin}/door.mjs` },
} as const satisfies Record<SandboxProgram, { source: string; target: string }>;

const bundledCode = new Map<string, string>();

/** A sandbox program's code as one JavaScript file (Node's own stripper, as `node x.ts` would run it), made once. */
export function sandboxProgramCode(program: SandboxProgram): string {
  let code = bundledCode.get(program);
  if (code === undefined) {
    code = bundleProgram(SANDBOX_PROGRAMS[program].source);
    bundledCode.set(program, code);
  }
  return code;
}

const strip = (file: string) => stripTypeScriptTypes(readFileSync(file, 'utf8'), { mode: 'strip' });
/** `import { a, b as c } from '…';` in stripped code (a type-only one is blank by then). */
const NAMED_IMPORT = /^import\s*\{([^}]*)\}\s*from\s*['"]([^'"]+)['"];?[ \t]*$/gm;
/** A declaration a helper module exports: `export function f`, `export const X`… */
const EXPORTED = /^export\s+((?:async\s+)?function\*?|class|const|let)\s+([A-Za-z_$][\w$]*)/gm;

/** `a, b as c` → `a, b: c` (a destructuring pattern). */
function bindings(names: string): string {
  return names
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean)
    .map((name) => name.replace(/\s+as\s+/, ': '))
    .join(', ');
}

/**
 * `entry` with the helper modules it imports (relative `.ts` imports, transitively) bundled in: each
 * helper becomes a scope of its own ahead of the entry, its node: imports hoisted as namespaces
 * (any Node an image holds runs them), and each import of it a destructuring of that scope. A
 * helper holds node: and relative imports and `export` declarations only; anything else (a package,
 * `import.meta`, an export list) fails here, at the worker's first sandbox, not inside one.
 */
export function bundleProgram(entry: string): string {
  const modules: string[] = [];
  const visit = (file: string, chain: string[]) => {
    if (chain.includes(file)) throw new Error(`${relative(HERE, file)} imports itself through ${chain.join(' → ')}`);
    if (modules.includes(file)) return;
    for (const [, , specifier] of strip(file).matchAll(NAMED_IMPORT))
      if (specifier!.startsWith('.')) visit(resolve(dirname(file), specifier!), [...chain, file]);
    if (file !== entry) modules.push(file);
  };
  visit(entry, []);
  const scope = (file: string) => `__svc_module_${modules.indexOf(file)}`;
  const hoisted: string[] = [];
  /** A module's imports: node: ones from hoisted namespaces, helpers from their scopes. */
  const linked = (file: string, code: string, hoist: boolean) =>
    code.replace(NAMED_IMPORT, (whole, names: string, specifier: string) => {
      if (specifier.startsWith('.'))
        return `const { ${bindings(names)} } = ${scope(resolve(dirname(file), specifier))};`;
      if (!hoist) return whole;
      if (!specifier.startsWith('node:')) throw new Error(`${relative(HERE, file)} imports ${specifier}`);
      const namespace = `${scope(file)}_${hoisted.length}`;
      hoisted.push(`import * as ${namespace} from ${JSON.stringify(specifier)};`);
      return `const { ${bindings(names)} } = ${namespace};`;
    });
  const scopes = modules.map((file) => {
    const code = linked(file, strip(file), true);
    const names = [...code.matchAll(EXPORTED)].map((match) => match[2]);
    const body = code.replace(EXPORTED, '$1 $2');
    if (/^\s*(import|export)\b|import\.meta/m.test(body)) throw new Error(`${relative(HERE, file)} cannot be bundled`);
    return `const ${scope(file)} = (() => {\n${body}\nreturn { ${names.join(', ')} };\n})();`;
  });
  return [...hoisted, ...scopes, linked(entry, strip(entry), false)].join('\n');
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
 * The agent's argv behind svc's program in front of it, if any: the ACP client (an agent that speaks
 * the Agent Client Protocol), the steering relay (an agent that takes steering on its input) or a
 * preview's door. `at` is where programs are (source: svc's
 * checkout, unsandboxed; target: the sandbox's bin), `netDir` the socket directory as seen there.
 */
export function fronted(launch: LaunchSpec, node: string, at: 'source' | 'target', netDir: string, argv: string[]) {
  // No inspector on SIGUSR1: the agent may signal the relay (its own uid).
  if (launch.protocol === 'acp') return [...programNode(node), '--disable-sigusr1', SANDBOX_PROGRAMS.acp[at], ...argv];
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
