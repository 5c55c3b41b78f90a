// A data directory's own name: made once, at random, and kept in the directory, so every worker
// that shares the directory (and every restart of one) agrees on it. Work that must run where a
// data directory is (its retention pass) goes to the task queue this key names.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dataPaths } from './config.ts';

const KEY = /^[0-9a-f]{16}$/;

/** The directory's key; the first caller makes it (an exclusive create: two at once agree). */
export function dataDirKey(dataDir: string): string {
  const path = dataPaths.dataDirKey(dataDir);
  mkdirSync(dataDir, { recursive: true });
  try {
    writeFileSync(path, `${randomBytes(8).toString('hex')}\n`, { flag: 'wx', mode: 0o644 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const key = readFileSync(path, 'utf8').trim();
  if (!KEY.test(key)) throw new Error(`${path} does not hold a data directory key (16 hex digits); remove it`);
  return key;
}

/** The task queue of the workers of one data directory: `<task queue>@<key>`. */
export function dataDirTaskQueue(taskQueue: string, key: string): string {
  return `${taskQueue}@${key}`;
}
