// Wakes a waiting loop the moment a sandbox's record lands (inotify on its directory), rather than
// at its next poll: the start sees the agent spawned (agent.json) and the supervising loop sees it
// exit (exit.json) without polling closely. The poll stays
// the rule (a watch can miss events on some filesystems); the watch only cuts a wait short. The
// agent's own output files are in the same directory: a chatty (or hostile) agent turns the watch
// off after a few hundred events, so its writes never cost the worker a callback each.
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';

/** Events for other files a watch takes before it closes (the loop then only polls). */
const FOREIGN_EVENTS_MAX = 256;

export interface RecordWatch {
  /**
   * Waits `ms`, or less: until one of the records appears (or appeared since the last wait, once),
   * or `cancelled` fires. A plain timer, so a long loop of waits retains nothing.
   */
  wait(ms: number, cancelled: AbortSignal): Promise<void>;
  close(): void;
}

/** Watches for the exit record alone (the supervising loop). */
export function watchForExit(exitPath: string): RecordWatch {
  return watchForRecords(dirname(exitPath), [basename(exitPath)]);
}

/** Watches `dir` for any of the records `names` (each written by rename: its name is the event's). */
export function watchForRecords(dir: string, names: string[]): RecordWatch {
  let wake: (() => void) | null = null;
  let landed = false;
  let foreign = 0;
  let watcher: FSWatcher | null = null;
  const close = () => {
    watcher?.close();
    watcher = null;
  };
  try {
    // A record is renamed into place (writeJsonAtomic): its name is the event's.
    watcher = watch(dir, (_event, name) => {
      if (name !== null && names.includes(name)) {
        // A waiter takes the landing; otherwise the next wait does (once: a loop that goes on
        // after a landing must not have every later wait end at once, without yielding).
        if (wake) wake();
        else landed = true;
      } else if (++foreign > FOREIGN_EVENTS_MAX) close();
    });
    watcher.on('error', close);
  } catch {
    watcher = null;
  }
  return {
    wait(ms, cancelled) {
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          cancelled.removeEventListener('abort', done);
          wake = null;
          resolve();
        };
        const timer = setTimeout(done, ms);
        cancelled.addEventListener('abort', done, { once: true });
        if (cancelled.aborted) return done();
        if (landed) {
          landed = false;
          return done();
        }
        wake = done;
      });
    },
    close,
  };
}
