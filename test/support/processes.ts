// Real child processes for tests that kill things: an `svc worker` in its own process.
import { spawn, type ChildProcess } from 'node:child_process';
import type { WorkflowHandle } from '@temporalio/client';

export interface ChildHandle {
  child: ChildProcess;
  output(): string;
  /** The exit code, once the output read so far is all of it (see `drainedExit`). */
  exited: Promise<number | null>;
}

/** How long after its exit a child's pipes may stay open (held by a grandchild) before the output is taken as is. */
const DRAIN_GRACE_MS = 2_000;

/**
 * The child's exit code, resolved once its stdout and stderr are drained too. 'exit' can come before
 * the last 'data' events; 'close' alone could wait forever on a grandchild (a sandbox, Temporal)
 * that inherited the pipes and outlives a killed parent, so the wait for it is bounded.
 */
export function drainedExit(child: ChildProcess): Promise<number | null> {
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      const grace = setTimeout(() => resolve(code), DRAIN_GRACE_MS);
      void closed.then(() => {
        clearTimeout(grace);
        resolve(code);
      });
    }),
  );
}

/** `input`: what the command reads on stdin (none: stdin is closed). */
export function spawnSvc(args: string[], env: NodeJS.ProcessEnv, input?: string): ChildHandle {
  const child = spawn(process.execPath, ['--no-warnings', 'cli/main.ts', ...args], {
    env,
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (input !== undefined) child.stdin!.end(input);
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  return { child, output: () => output, exited: drainedExit(child) };
}

export async function waitForOutput(
  handle: ChildHandle,
  pattern: RegExp,
  timeoutMs = 60_000,
): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const match = handle.output().match(pattern);
    if (match) return match;
    if (handle.child.exitCode !== null)
      throw new Error(`process exited (${handle.child.exitCode}) before printing ${pattern}:\n${handle.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no ${pattern} within ${timeoutMs} ms:\n${handle.output()}`);
}

export async function waitFor<T>(
  probe: () => Promise<T | undefined | false>,
  what: string,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Waits until the workflow has an activity of this type under way (started, not yet completed). */
export async function waitForActivityUnderWay(handle: WorkflowHandle, activityType: string): Promise<void> {
  await waitFor(async () => {
    const pending = (await handle.describe()).raw.pendingActivities ?? [];
    return pending.some((activity) => activity.activityType?.name === activityType && activity.lastStartedTime);
  }, `${activityType} to be under way`);
}
