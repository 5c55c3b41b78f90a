// A running agent's commits, read without trusting its workspace: svc opens every directory and
// file of the workspace's .git itself, one component at a time with O_NOFOLLOW (through
// /proc/self/fd, Linux's openat), takes only plain files (no symlink out of the workspace, no
// FIFO, no device), copies just the object files into a scratch repository of its own, and reads
// HEAD as text. git never runs in the workspace: none of its config, hooks, attributes or
// alternates is ever read.
import { constants } from 'node:fs';
import { mkdir, open, readdir, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Object bytes svc copies from one workspace at most (its own packs, which the clone lacks, count). */
export const MAX_WORKSPACE_OBJECT_BYTES = 512 * 1024 * 1024;
const MAX_REF_FILE_BYTES = 4096;
const MAX_PACKED_REFS_BYTES = 4 << 20;
const SHA = /^[0-9a-f]{40}$/;
const REF_NAME = /^refs\/heads\/[A-Za-z0-9._\-/]{1,200}$/;

export class WorkspaceObjectsError extends Error {}

const NOFOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** A directory handle; its children are opened through /proc/self/fd/<fd>/<name> (never a symlink). */
async function openDirectory(parent: string, name: string): Promise<FileHandle> {
  try {
    return await open(join(parent, name), NOFOLLOW | constants.O_DIRECTORY);
  } catch (error) {
    throw new WorkspaceObjectsError(
      `${name} is not a directory of the workspace (${(error as NodeJS.ErrnoException).code})`,
    );
  }
}

const at = (directory: FileHandle) => `/proc/self/fd/${directory.fd}`;

/** A plain file's handle, or null when it is absent; anything else (a symlink, a FIFO) is refused. */
async function openPlainFile(directory: FileHandle, name: string): Promise<FileHandle | null> {
  let handle: FileHandle;
  try {
    handle = await open(join(at(directory), name), NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new WorkspaceObjectsError(
      `${name} cannot be read as a plain file (${(error as NodeJS.ErrnoException).code})`,
    );
  }
  if (!(await handle.stat()).isFile()) {
    await handle.close();
    throw new WorkspaceObjectsError(`${name} is not a plain file`);
  }
  return handle;
}

async function readSmall(directory: FileHandle, name: string, limit: number): Promise<string | null> {
  const handle = await openPlainFile(directory, name);
  if (!handle) return null;
  try {
    const buffer = Buffer.alloc(limit + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > limit) throw new WorkspaceObjectsError(`${name} is larger than ${limit} bytes`);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

async function withDirectory<T>(parent: string, name: string, body: (dir: FileHandle) => Promise<T>): Promise<T> {
  const directory = await openDirectory(parent, name);
  try {
    return await body(directory);
  } finally {
    await directory.close();
  }
}

/** The commit the workspace's HEAD names: a loose ref, else packed-refs; its own text, never git's. */
async function readHead(gitDir: FileHandle): Promise<string | null> {
  const head = (await readSmall(gitDir, 'HEAD', MAX_REF_FILE_BYTES))?.trim();
  if (!head) return null;
  if (SHA.test(head)) return head;
  const ref = /^ref: (\S+)$/.exec(head)?.[1];
  if (!ref || !REF_NAME.test(ref) || ref.split('/').some((part) => part === '..' || part === '.' || part === ''))
    throw new WorkspaceObjectsError("the workspace's HEAD names no branch svc reads");
  const parts = ref.split('/');
  const loose = await looseRef(gitDir, parts);
  if (loose) return loose;
  const packed = await readSmall(gitDir, 'packed-refs', MAX_PACKED_REFS_BYTES);
  const line = packed?.split('\n').find((row) => row.endsWith(` ${ref}`));
  const sha = line?.slice(0, 40);
  return sha && SHA.test(sha) ? sha : null;
}

async function looseRef(directory: FileHandle, parts: string[]): Promise<string | null> {
  const [first, ...rest] = parts;
  if (rest.length === 0) {
    const text = (await readSmall(directory, first!, MAX_REF_FILE_BYTES))?.trim();
    return text && SHA.test(text) ? text : null;
  }
  try {
    return await withDirectory(at(directory), first!, (inner) => looseRef(inner, rest));
  } catch (error) {
    if (error instanceof WorkspaceObjectsError && /ENOENT/.test(error.message)) return null;
    throw error;
  }
}

/** Copies at most `budget.left` bytes of a plain file into `target`; refuses a file that outgrows it. */
async function copyPlain(directory: FileHandle, name: string, target: string, budget: { left: number }) {
  const input = await openPlainFile(directory, name);
  if (!input) return;
  try {
    const output = await open(target, 'wx', 0o600);
    try {
      const buffer = Buffer.alloc(1 << 20);
      for (let read; (read = (await input.read(buffer, 0, buffer.length, null)).bytesRead) > 0;) {
        budget.left -= read;
        if (budget.left < 0)
          throw new WorkspaceObjectsError(
            `the workspace holds more than ${MAX_WORKSPACE_OBJECT_BYTES} bytes of new objects`,
          );
        await output.write(buffer, 0, read);
      }
    } finally {
      await output.close();
    }
  } finally {
    await input.close();
  }
}

/**
 * Copies the workspace's object files into `scratchObjects` (a bare repository's objects/ that
 * already borrows the project clone's): loose objects, and the packs the clone does not have by
 * name. Answers the commit the workspace's HEAD names (null: none yet).
 */
export async function copyWorkspaceCommits(
  workspace: string,
  scratchObjects: string,
  clonePacks: Set<string>,
): Promise<string | null> {
  const budget = { left: MAX_WORKSPACE_OBJECT_BYTES };
  return withDirectory(dirname(workspace), basename(workspace), (root) =>
    withDirectory(at(root), '.git', async (gitDir) => {
      const head = await readHead(gitDir);
      if (!head) return null;
      await withDirectory(at(gitDir), 'objects', async (objects) => {
        for (const entry of await readdir(at(objects))) {
          if (/^[0-9a-f]{2}$/.test(entry)) {
            await withDirectory(at(objects), entry, async (fanout) => {
              const names = (await readdir(at(fanout))).filter((name) => /^[0-9a-f]{38}$/.test(name));
              if (names.length === 0) return;
              await mkdir(join(scratchObjects, entry), { recursive: true });
              for (const name of names) await copyPlain(fanout, name, join(scratchObjects, entry, name), budget);
            });
          } else if (entry === 'pack') {
            await withDirectory(at(objects), entry, async (packs) => {
              for (const name of await readdir(at(packs))) {
                const pack = /^(pack-[0-9a-f]{40})\.pack$/.exec(name)?.[1];
                if (!pack || clonePacks.has(name)) continue;
                await mkdir(join(scratchObjects, 'pack'), { recursive: true });
                await copyPlain(packs, `${pack}.idx`, join(scratchObjects, 'pack', `${pack}.idx`), budget);
                await copyPlain(packs, name, join(scratchObjects, 'pack', name), budget);
              }
            });
          }
          // objects/info (alternates, http-alternates) is never read: svc borrows only the clone.
        }
      });
      return head;
    }),
  );
}
