// A container's output, copied into the sandbox's log files exactly once: from its start, across a
// restart of the engine's API (the follow is opened again) and across a new supervisor (reattach),
// by a cursor kept beside the logs.
import { writeSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { readJsonIfExists, writeJsonAtomic } from '../../host/files.ts';
import type { DockerEngine } from './docker-engine.ts';

/** How far the output is copied: the engine time of the last frame, and how many frames had it. */
interface LogCursor {
  ms: number;
  frames: number;
}

export interface OutputFiles {
  stdoutFd: number;
  stderrFd: number;
  cursorFile: string;
}

/** How often the cursor is saved: after a supervisor crash at most this much output repeats. */
const CURSOR_SAVE_MS = 100;
/** How long the last output may take to arrive once the container has exited. */
const DRAIN_MS = 3000;
/** Pause before following again when the engine ended a follow of a running container. */
const REFOLLOW_MS = 1000;

/**
 * Writes frames and keeps the cursor. Engines stamp frames to the second (Podman) or nanosecond
 * (Docker): a follow opened at the cursor skips what is older, and frames of the cursor's own time
 * by count.
 */
export function logCopier(output: OutputFiles) {
  let cursor: LogCursor = readJsonIfExists<LogCursor>(output.cursorFile) ?? { ms: 0, frames: 0 };
  let from = cursor;
  let skip = 0;
  let savedAt = 0;
  let trailing: NodeJS.Timeout | undefined;
  const save = () => {
    clearTimeout(trailing);
    trailing = undefined;
    writeJsonAtomic(output.cursorFile, cursor);
    savedAt = Date.now();
  };
  return {
    /** Starts a follow at the cursor; answers its `since` (a second early: either meaning of it works). */
    resume(): number {
      from = cursor;
      skip = cursor.frames;
      return cursor.ms ? Math.max(1, Math.floor(cursor.ms / 1000) - 1) : 0;
    },
    onFrame(stream: number, frame: Buffer) {
      const space = frame.indexOf(0x20);
      const ms = Date.parse(frame.toString('latin1', 0, Math.max(space, 0)));
      const payload = space >= 0 ? frame.subarray(space + 1) : frame;
      const destination = stream === 2 ? output.stderrFd : output.stdoutFd;
      // The engine stamps every frame; one without a readable stamp is copied but moves no cursor.
      if (Number.isNaN(ms)) return void writeSync(destination, payload);
      if (ms < from.ms) return;
      if (ms === from.ms && skip > 0) {
        skip -= 1;
        return;
      }
      writeSync(destination, payload);
      cursor = ms === cursor.ms ? { ms, frames: cursor.frames + 1 } : { ms, frames: 1 };
      // At most every CURSOR_SAVE_MS, and once more after the last frame of a burst.
      if (Date.now() - savedAt >= CURSOR_SAVE_MS) save();
      else trailing ??= setTimeout(save, CURSOR_SAVE_MS).unref();
    },
    save,
  };
}

export type LogCopier = ReturnType<typeof logCopier>;
/** One follow of a sandbox's log from the copier's cursor (`copier.resume()`), until the backend ends it. */
export type OpenFollow = (copier: LogCopier) => { done: Promise<void>; stop(): void };

/** Follows the container's output until `drain()` (after its exit) or `stop()`. */
export function copyContainerOutput(engine: DockerEngine, id: string, output: OutputFiles) {
  return copySandboxOutput(
    (copier) => engine.followLogs(id, copier.onFrame, { timestamps: true, sinceSeconds: copier.resume() }),
    output,
  );
}

/** Follows a sandbox's output (a container's, a pod's) until `drain()` (after its exit) or `stop()`. */
export function copySandboxOutput(open: OpenFollow, output: OutputFiles) {
  const copier = logCopier(output);
  let active = true;
  let current: ReturnType<OpenFollow> | undefined;
  const follow = () => open(copier);
  const following = (async () => {
    while (active) {
      current = follow();
      await current.done.catch(() => {});
      // The engine ended the follow while the container may run on (its API restarted): again.
      if (active) await sleep(REFOLLOW_MS);
    }
  })();
  return {
    /** Once the container has exited: a last pass from the cursor, bounded in time. */
    async drain(): Promise<void> {
      active = false;
      current?.stop();
      await following;
      const last = follow();
      const cut = setTimeout(() => last.stop(), DRAIN_MS);
      await last.done.catch(() => {});
      clearTimeout(cut);
      copier.save();
    },
    stop(): void {
      active = false;
      current?.stop();
    },
  };
}
