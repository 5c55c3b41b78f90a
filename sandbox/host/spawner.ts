// Detached processes (a run's supervisor) started by a small helper process instead of the worker.
// Starting a process forks its parent first: a worker holding ~800 MiB spent ~37 ms of its event
// loop per supervisor copying its page tables (a CPU profile of a drain: a third of the worker's
// busy time). The helper is a few MiB of plain JavaScript (spawner-program.mjs), started once per
// worker on first use: it forks cheaply and answers each request with the new pid. Should it be
// gone, the worker starts the process itself, as before.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const PROGRAM = fileURLToPath(new URL('./spawner-program.mjs', import.meta.url));
const ANSWER_TIMEOUT_MS = 5000;

interface Pending {
  resolve(pid: number): void;
  reject(error: Error): void;
}

let helper: { child: ChildProcess; pending: Pending[] } | null = null;

function startHelper(): NonNullable<typeof helper> {
  const child = spawn(process.execPath, ['--no-warnings', PROGRAM], { stdio: ['pipe', 'pipe', 'ignore'] });
  const started = { child, pending: [] as Pending[] };
  const gone = (error: Error) => {
    if (helper === started) helper = null;
    for (const request of started.pending.splice(0)) request.reject(error);
  };
  child.once('error', gone);
  // 'close', not 'exit': answers still in the pipe are read before the requests left are failed.
  child.once('close', () => gone(new Error('the spawner exited')));
  child.stdin!.on('error', () => undefined);
  // Answers come in the order of the requests (one line each).
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const request = started.pending.shift();
    if (started.pending.length === 0) holdOpen(started.child, false);
    let answer: { pid?: number; error?: string };
    try {
      answer = JSON.parse(line) as typeof answer;
    } catch {
      answer = { error: `the spawner said: ${line.slice(0, 200)}` };
    }
    if (answer.pid) request?.resolve(answer.pid);
    else request?.reject(new Error(answer.error ?? 'the spawner could not start the process'));
  });
  // The helper must not keep a worker that is shutting down alive: only an answer awaited does.
  child.unref();
  holdOpen(child, false);
  (child.stdin as unknown as { unref?: () => void }).unref?.();
  return started;
}

function holdOpen(child: ChildProcess, hold: boolean): void {
  const stdout = child.stdout as unknown as { ref?: () => void; unref?: () => void };
  if (hold) stdout.ref?.();
  else stdout.unref?.();
}

function spawnHere(argv: string[], env: NodeJS.ProcessEnv): number {
  const child = spawn(argv[0]!, argv.slice(1), { detached: true, stdio: 'ignore', env });
  // A start that fails (EAGAIN, ENOENT) is seen by the caller's own wait, never a crash.
  child.once('error', () => undefined);
  child.unref();
  return child.pid ?? 0;
}

/**
 * Starts `argv` detached (its own session, no stdio, `env`: this process's environment) and answers its
 * pid (0 when unknown). Through the helper when it answers, else from this process. At least
 * once: a helper lost mid-request means a second start here, so what is started must be
 * idempotent (a supervisor is: its claim).
 */
export async function spawnDetached(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  try {
    helper ??= startHelper();
    const { child, pending } = helper;
    return await new Promise<number>((resolve, reject) => {
      // A helper that does not answer (stopped, stuck in a fork) is dropped, and this start made here.
      // A start may then happen twice: the supervisor's claim lets only one of them run a sandbox.
      const timer = setTimeout(() => {
        stopSpawner();
        reject(new Error('the spawner did not answer'));
      }, ANSWER_TIMEOUT_MS);
      pending.push({
        resolve: (pid) => (clearTimeout(timer), resolve(pid)),
        reject: (error) => (clearTimeout(timer), reject(error)),
      });
      holdOpen(child, true);
      // This process's environment and directory now, as a spawn from here would have them.
      child.stdin!.write(`${JSON.stringify({ argv, env, cwd: process.cwd() })}\n`);
    });
  } catch {
    return spawnHere(argv, env);
  }
}

/** Stops the helper (a new one starts on the next request). Its input closing ends it too. */
export function stopSpawner(): void {
  helper?.child.kill();
  helper = null;
}
