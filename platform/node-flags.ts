// The V8 flags of svc's long-lived processes (the API, the worker, `svc serve`). V8 sizes its young
// generation for throughput: up to 16 MiB per semi-space, ~50 MiB of a small API's resident memory
// before anything is held (docs/decisions/0037-process-costs.md). Flags that size the heap are read only when a
// process starts, so a long-lived command replaces itself, once, with the same command under them
// (execve: same pid, same open files, nothing of the first image is left). Every launcher (the
// `svc` script, npm, a container's entrypoint, the tests) gets them without knowing of them.
// SVC_NODE_FLAGS replaces the default (each flag as --name=value; they take precedence over the
// same options in NODE_OPTIONS); an empty value keeps Node's own. Flags this Node refuses are
// reported and left out, so a typo never keeps the service from starting. The restart also caps
// glibc's malloc arenas (MALLOC_ARENA_MAX), which only a process's environment at start can do.
import { spawnSync } from 'node:child_process';

/** Commands whose process lives long enough for its heap's sizing to matter. */
const LONG_LIVED = new Set(['serve', 'worker']);

/**
 * The default: a 1 MiB young generation (scavenges more frequent, each shorter), and V8 sized for
 * memory over speed, which keeps the old generation close to what is live. Without the latter a
 * worker draining a backlog grew to ~500 MiB and kept it (the workflow thread's heap, grown by
 * evicted workflows' garbage); with it, ~290 MiB, flat, at the same drain rate (docs/decisions/0037-process-costs.md).
 * And V8's optimising compiler on the thread that runs the code: compiled on a helper thread, the
 * memory it used stayed with the process (an API: +35 MiB native, heap flat, over 1,400 dispatches).
 */
export const DEFAULT_NODE_FLAGS = '--max-semi-space-size=1 --optimize-for-size --no-concurrent-recompilation';

/**
 * glibc's malloc arenas, set with the flags (glibc reads it only at start; an operator's own value
 * stands). By default each thread that allocates may get an arena of its own (up to 8 per core);
 * the SDK's native threads and Node's pools then keep freed memory in many of them. Two: ~8 MiB less
 * for an API.
 */
export const DEFAULT_MALLOC_ARENA_MAX = '2';

/** Marks a process already started under svc's flags (children inherit it: they start anew, so it is removed). */
const APPLIED = 'SVC_NODE_FLAGS_APPLIED';

/** The flags to start with: SVC_NODE_FLAGS (whitespace-separated V8 options) or the default. */
export function nodeFlags(env: NodeJS.ProcessEnv): string[] {
  const declared = env.SVC_NODE_FLAGS ?? DEFAULT_NODE_FLAGS;
  return declared.split(/\s+/).filter((flag) => flag.startsWith('--'));
}

/**
 * Replaces this process with the same command under svc's Node flags when `command` is long-lived
 * and the flags are not in force yet; otherwise does nothing (and never returns when it does).
 */
export function applyNodeFlags(command: string | undefined): void {
  if (process.env[APPLIED] === '1') {
    // What this process's own children (the spawner, supervisors) must not take for theirs.
    delete process.env[APPLIED];
    return;
  }
  if (!command || !LONG_LIVED.has(command) || typeof process.execve !== 'function') return;
  const flags = nodeFlags(process.env).filter((flag) => !process.execArgv.includes(flag));
  if (flags.length === 0) return;
  // Node checks its options only once started: a trial start (~40 ms, once) instead of a crash loop.
  const trial = spawnSync(process.execPath, [...flags, '-e', '0'], { encoding: 'utf8', timeout: 10_000 });
  if (trial.status !== 0) {
    process.stderr.write(`svc: SVC_NODE_FLAGS left out, Node refuses them: ${trial.stderr.trim().slice(0, 300)}\n`);
    return;
  }
  try {
    process.execve(process.execPath, [process.execPath, ...flags, ...process.execArgv, ...process.argv.slice(1)], {
      MALLOC_ARENA_MAX: DEFAULT_MALLOC_ARENA_MAX,
      ...process.env,
      [APPLIED]: '1',
    });
  } catch (error) {
    // The restart itself failed: the command still runs, under Node's own sizing.
    process.stderr.write(`svc: not restarted under ${flags.join(' ')}: ${(error as Error).message}\n`);
  }
}
