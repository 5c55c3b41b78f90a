// A kernel lock on a file, held across processes with flock(2) through util-linux flock(1): the
// lock lives as long as a small holder process, which ends when svc's end of its stdin closes, so
// if svc dies the kernel releases it.
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

export type LockMode = 'shared' | 'exclusive';

export async function withFileLock<T>(
  lockFile: string,
  mode: LockMode,
  work: () => Promise<T>,
  timeoutSeconds = 600,
): Promise<T> {
  const lock = await holdLock(lockFile, mode, ['--timeout', String(timeoutSeconds)]);
  try {
    return await work();
  } finally {
    await lock!.release();
  }
}

export interface HeldFileLock {
  release(): Promise<void>;
}

/** Takes the lock now if it is free and holds it until released (or this process ends); undefined if taken. */
export function tryHoldFileLock(lockFile: string, mode: LockMode): Promise<HeldFileLock | undefined> {
  return holdLock(lockFile, mode, ['--nonblock', '--conflict-exit-code', String(CONFLICT_EXIT)]);
}

const CONFLICT_EXIT = 75;

async function holdLock(lockFile: string, mode: LockMode, how: string[]): Promise<HeldFileLock | undefined> {
  mkdirSync(dirname(lockFile), { recursive: true });
  const holder = spawn('flock', [`--${mode}`, ...how, lockFile, 'sh', '-c', 'echo locked; exec cat >/dev/null'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    // Its own process group: a Ctrl-C meant for svc must not end the holder before svc has stopped.
    detached: true,
  });
  const exited = new Promise<number | null>((resolve) => holder.once('exit', (code) => resolve(code)));
  const locked = await new Promise<boolean>((resolve, reject) => {
    let stderr = '';
    holder.stderr!.on('data', (chunk) => (stderr += chunk));
    holder.stdout!.once('data', () => resolve(true));
    holder.once('error', reject);
    void exited.then((code) =>
      code === CONFLICT_EXIT
        ? resolve(false)
        : reject(new Error(`could not lock ${lockFile} (flock exited ${code}): ${stderr.trim()}`)),
    );
  });
  if (!locked) return undefined;
  // Nothing of the holder keeps svc's event loop alive; its stdin pipe is what keeps the lock.
  holder.unref();
  for (const stream of [holder.stdin, holder.stdout, holder.stderr])
    (stream as unknown as { unref?(): void }).unref?.();
  return {
    async release() {
      // Waited for: the exit must keep this process alive until the lock is gone.
      holder.ref();
      holder.stdin!.end();
      await exited;
    },
  };
}
