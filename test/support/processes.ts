// Real child processes for tests that kill things: an `svc worker` in its own process.
import { spawn, type ChildProcess } from 'node:child_process';

export interface ChildHandle {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

export function spawnSvc(args: string[], env: NodeJS.ProcessEnv): ChildHandle {
  const child = spawn(process.execPath, ['--no-warnings', 'cli/main.ts', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
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
