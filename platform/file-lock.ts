// A kernel lock on a file, held across processes with flock(2) through util-linux flock(1): the
// lock lives as long as a small holder process, so if svc dies the kernel releases it.
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
  mkdirSync(dirname(lockFile), { recursive: true });
  const holder = spawn(
    'flock',
    [`--${mode}`, '--timeout', String(timeoutSeconds), lockFile, 'sh', '-c', 'echo locked; exec cat >/dev/null'],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  const exited = new Promise<number | null>((resolve) => holder.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    let stderr = '';
    holder.stderr!.on('data', (chunk) => (stderr += chunk));
    holder.stdout!.once('data', () => resolve());
    holder.once('error', reject);
    void exited.then((code) =>
      reject(new Error(`could not lock ${lockFile} (flock exited ${code}): ${stderr.trim()}`)),
    );
  });
  try {
    return await work();
  } finally {
    holder.stdin!.end();
    await exited;
  }
}
