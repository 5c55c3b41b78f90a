// What of the host an agent needs besides the system: the Node that runs svc's in-sandbox programs,
// svc's own node_modules/.bin (the built-in agents' CLIs, whatever PATH svc was started with) and
// the agent's own CLI (an operator-defined agent's command; a project's agents get only what is
// already there). A path inside a node_modules tree brings that whole tree (a CLI's platform
// binary lives in a sibling package); anything else brings its own directory. A path that would
// show the data directory, the project clones, svc's checkout or a whole home is never bound.
import { accessSync, constants, existsSync, realpathSync, statSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, resolve, sep } from 'node:path';

const SYSTEM_PREFIXES = ['/usr/', '/bin/', '/sbin/', '/lib/', '/lib64/'];
const TOO_BROAD = ['/', '/home', '/root', '/etc', '/var', '/run', '/tmp', '/opt', '/srv', '/mnt', '/media'];

export interface Toolchain {
  /** Host directories bound read-only at their own path. */
  dirs: string[];
  /** PATH inside the sandbox: the host's entries the sandbox can see, in the host's order. */
  path: string;
  /** Candidates refused, and why: shown on the run's sandbox.started event. */
  refused: string[];
  /** argv[0] as the sandbox can reach it: the real path when the one given runs through a symlink it cannot see. */
  command: string;
}

function isUnder(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`);
}

function isSystem(path: string): boolean {
  return SYSTEM_PREFIXES.some((prefix) => isUnder(path, prefix.slice(0, -1)));
}

/** Where a command would be found on PATH, as the shell would find it. */
export function whichOnPath(command: string, path: string | undefined): string | undefined {
  if (command.includes('/')) return isAbsolute(command) ? command : undefined;
  for (const dir of (path ?? '').split(delimiter).filter(Boolean)) {
    const candidate = join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The directory to bind for a path: its outermost node_modules, or the directory it names or sits in. */
function rootOf(path: string): string | undefined {
  if (!existsSync(path)) return undefined;
  const real = realpathSync(path);
  const index = real.split(sep).indexOf('node_modules');
  if (index > 0)
    return real
      .split(sep)
      .slice(0, index + 1)
      .join(sep);
  return statSync(real).isDirectory() ? real : dirname(real);
}

export interface ToolchainRequest {
  /** The agent's argv[0]. */
  command: string;
  /** Whether its directory may be bound: not for a project's own agents (their repository picks the command). */
  trustCommand: boolean;
  /** svc's own PATH: its node_modules/.bin entries bring their trees. */
  hostPath: string | undefined;
  /** svc's installation's node_modules/.bin: searched first for the command, bound, first on the sandbox's PATH. */
  svcBin: string;
  /** The PATH the agent asked for, filtered to what the sandbox can see. */
  agentPath: string | undefined;
  /** SVC_SANDBOX_TOOLCHAIN. */
  extra: string[];
  /** Directories no sandbox may see, or see inside (data directory, project clones). */
  forbidden: string[];
  /** Directories no binding may contain (svc's checkout, svc's home). */
  enclosing: string[];
}

const real = (path: string) => (existsSync(path) ? realpathSync(path) : resolve(path));

/** The toolchain of one launch. */
export function resolveToolchain(request: ToolchainRequest): Toolchain {
  const refused: string[] = [];
  const dirs = new Set<string>();
  const forbidden = request.forbidden.map(real);
  const enclosing = request.enclosing.map(real);
  const svcBin = real(request.svcBin);
  const searchPath = [svcBin, request.hostPath ?? ''].join(delimiter);
  const commandPath = request.trustCommand ? whichOnPath(request.command, searchPath) : undefined;
  const nodeModulesBins = searchPath.split(delimiter).filter((entry) => entry.endsWith(`${sep}node_modules${sep}.bin`));
  for (const candidate of [
    process.execPath,
    ...(commandPath ? [commandPath] : []),
    ...nodeModulesBins,
    ...request.extra,
  ]) {
    const root = rootOf(resolve(candidate));
    if (!root || isSystem(`${root}${sep}`)) continue;
    const clash = TOO_BROAD.includes(root)
      ? 'too broad'
      : (forbidden.find((secret) => isUnder(secret, root) || isUnder(root, secret)) ??
        enclosing.find((dir) => isUnder(dir, root)));
    if (clash) {
      refused.push(`${root}: ${clash === 'too broad' ? clash : `would show ${clash}`}`);
      continue;
    }
    dirs.add(root);
  }
  // Lexically inside a bound directory: a path that reaches one only through a symlink is not there.
  const visible = (entry: string) => isSystem(`${entry}${sep}`) || [...dirs].some((dir) => isUnder(entry, dir));
  const entries = (request.agentPath ?? '/usr/local/bin:/usr/bin:/bin')
    .split(delimiter)
    .filter((entry) => entry && visible(entry));
  const nodeBin = dirname(process.execPath);
  if (!entries.includes(nodeBin) && [...dirs].some((dir) => isUnder(realpathSync(nodeBin), dir)))
    entries.unshift(nodeBin);
  if (visible(svcBin)) entries.unshift(svcBin);
  for (const system of ['/usr/local/bin', '/usr/bin', '/bin']) if (!entries.includes(system)) entries.push(system);
  const reachable =
    commandPath && !visible(dirname(commandPath)) && existsSync(commandPath)
      ? realpathSync(commandPath)
      : request.command;
  return { dirs: [...dirs], path: [...new Set(entries)].join(delimiter), refused, command: reachable };
}
