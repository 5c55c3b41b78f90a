// The supervisor as plain JavaScript. A supervisor is a Node process per run, on every run's critical
// path and alive as long as its agent; loading TypeScript costs each one a WebAssembly type stripper
// (~30 ms, ~19 MiB). So a worker strips the types of the supervisor's own module graph once, with
// Node's own stripper (what `node supervisor.ts` would do), into a fresh directory of its own, and
// starts supervisors from there. Modules the supervisor imports lazily (a container's or a pod's
// runner, a preview's door) stay TypeScript, loaded from the checkout when a sandbox needs them
// (so those supervisors still load the stripper). Anything unexpected falls back to the
// TypeScript entry point, and says so.
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dataPaths } from '../../platform/config.ts';
import { logger } from '../../platform/logger.ts';
import { isSameProcessAlive, processStartTime } from '../../platform/processes.ts';
import type { SupervisorHost } from './supervisor-host-client.ts';

const CHECKOUT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const ENTRY = join(CHECKOUT, 'sandbox', 'host', 'supervisor.ts');
/** A relative TypeScript specifier in stripped code: `from './x.ts'` (static) or `import('./x.ts')` (lazy). */
const SPECIFIER = /(from\s+|import\(\s*)['"](\.{1,2}\/[^'"]+\.ts)['"]/g;

/** The supervisor's eagerly loaded modules, each stripped of its types. */
function strippedGraph(): Map<string, string> {
  const graph = new Map<string, string>();
  const pending = [ENTRY];
  while (pending.length) {
    const file = pending.pop()!;
    if (graph.has(file)) continue;
    const code = stripTypeScriptTypes(readFileSync(file, 'utf8'), { mode: 'strip' });
    graph.set(file, code);
    for (const [, how, specifier] of code.matchAll(SPECIFIER))
      if (how!.startsWith('from')) pending.push(resolve(dirname(file), specifier!));
  }
  return graph;
}

/** A module's code with its specifiers pointing at the stripped copies, or (the rest) the checkout. */
function relinked(file: string, code: string, graph: Map<string, string>): string {
  return code.replace(SPECIFIER, (_whole, how: string, specifier: string) => {
    const target = resolve(dirname(file), specifier);
    const linked = graph.has(target) ? specifier.replace(/\.ts$/, '.mjs') : pathToFileURL(target).href;
    return `${how}${JSON.stringify(linked)}`;
  });
}

/** What the stripped copy could not load: paths relative to itself, packages, unlinked TypeScript. */
function unportable(code: string): boolean {
  return /import\.meta|from\s+['"](?!node:|\.{1,2}\/)|import\s+['"]|from\s+['"][^'"]+\.ts['"]/.test(code);
}

/** Copies and scratch directories a worker left in `programs/` are removed after this long. */
const STALE_PROGRAM_MS = 24 * 3600_000;

/**
 * Removes what workers that have since stopped left in `cacheDir`: their supervisor copies and
 * bundling scratch directories, a day after they were made. A copy whose worker still runs on this
 * host (its pid is in the name) stays, however old: that worker starts every supervisor from it.
 */
export function pruneStalePrograms(cacheDir: string, now = Date.now()): string[] {
  const removed: string[] = [];
  for (const entry of existsSync(cacheDir) ? readdirSync(cacheDir) : []) {
    if (!/^(supervisor|workflow-bundle)-/.test(entry)) continue;
    const path = join(cacheDir, entry);
    const held = lstatSync(path);
    if (!held.isDirectory() || now - held.mtimeMs < STALE_PROGRAM_MS) continue;
    const owner = /^supervisor-(\d+)-(\d+)-/.exec(entry);
    if (owner && isSameProcessAlive(Number(owner[1]), owner[2])) continue;
    rmSync(path, { recursive: true, force: true });
    removed.push(entry);
  }
  return removed;
}

/**
 * The copy each worker of this process prepared, by its data directory: a process may hold several
 * workers (tests, tools), and one's data directory may be removed while another's runs go on. With
 * it, the shared supervisor that runs from that copy, when the worker uses one.
 */
const prepared = new Map<string, { entry: string; host: SupervisorHost | null }>();
let lastPrepared: string | null = null;
/** The longest unix socket path Linux takes (108 bytes with its terminating zero). */
const MAX_SOCKET_PATH = 107;

/**
 * The supervisor's entry point to start for a sandbox under `sandboxDir`: the stripped copy its
 * worker prepared in the same data directory, else the TypeScript file. Without a directory: the
 * copy prepared last.
 */
export function supervisorProgram(sandboxDir?: string): string {
  const entry = sandboxDir ? preparedFor(sandboxDir)?.entry : lastPrepared;
  return entry && existsSync(entry) ? entry : ENTRY;
}

/** The shared supervisor for a sandbox under `sandboxDir`, when its worker uses one. */
export function supervisorHost(sandboxDir: string): SupervisorHost | null {
  const host = preparedFor(sandboxDir)?.host;
  return host && existsSync(host.program) ? host : null;
}

function preparedFor(sandboxDir: string) {
  const target = resolve(sandboxDir);
  let longest = '';
  let found: { entry: string; host: SupervisorHost | null } | undefined;
  for (const [dataDir, copy] of prepared)
    if (target.startsWith(`${dataDir}${sep}`) && dataDir.length > longest.length) [longest, found] = [dataDir, copy];
  return found;
}

/**
 * Writes a fresh stripped copy into a new private directory under `cacheDir` (in the data
 * directory, which only svc can write) and, once a trial start of it reaches its usage check,
 * starts supervisors from it. Never reuses a copy it did not write itself: what the root
 * supervisor runs is what this worker made from its own checkout. Answers the entry point. With
 * `shared`, sandboxes whose agent is a process of this host go to one shared supervisor that runs
 * from the copy (supervisor-host.ts), listening in the copy's directory.
 */
export function prepareSupervisorProgram(cacheDir: string, { shared = false }: { shared?: boolean } = {}): string {
  try {
    mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
    const held = lstatSync(cacheDir);
    if (held.isSymbolicLink() || held.uid !== process.getuid?.() || (held.mode & 0o022) !== 0)
      throw new Error(`${cacheDir} is not svc's own directory`);
    const graph = strippedGraph();
    // The worker's pid in the name: a copy in use is never pruned (pruneStalePrograms).
    const dir = mkdtempSync(join(cacheDir, `supervisor-${process.pid}-${processStartTime(process.pid) ?? 0}-`));
    for (const [file, code] of graph) {
      const target = join(dir, relative(CHECKOUT, file).replace(/\.ts$/, '.mjs'));
      const linked = relinked(file, code, graph);
      if (unportable(linked)) throw new Error(`${relative(CHECKOUT, file)} cannot run from a copy`);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, linked);
    }
    const entry = join(dir, relative(CHECKOUT, ENTRY).replace(/\.ts$/, '.mjs'));
    // Started with no argument, a supervisor that loaded every module says how it is used (exit 2).
    const trial = spawnSync(process.execPath, ['--no-warnings', '--no-experimental-strip-types', entry], {
      encoding: 'utf8',
      timeout: 10_000,
    });
    if (trial.status !== 2 || !trial.stderr.includes('usage: supervisor.ts'))
      throw new Error(`the stripped supervisor does not start: ${trial.stderr.slice(0, 500)}`);
    const dataDir = dirname(resolve(cacheDir));
    const socket = join(dir, 'host.sock');
    const host =
      // The worker's further shared supervisors listen at host-<n>.sock.
      shared && socket.length + 3 <= MAX_SOCKET_PATH
        ? { program: entry, socket, sandboxes: dataPaths.sandboxes(dataDir) }
        : null;
    prepared.set(dataDir, { entry, host });
    lastPrepared = entry;
    return entry;
  } catch (error) {
    logger({ component: 'worker' }).warn(
      { error: (error as Error).message },
      'supervisors start from TypeScript (slower, more memory): no stripped copy',
    );
    prepared.delete(dirname(resolve(cacheDir)));
    lastPrepared = ENTRY;
    return ENTRY;
  }
}
