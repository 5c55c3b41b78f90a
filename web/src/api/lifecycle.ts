// Keeps cached lists true. An operator's tab holds ONE GET /events/stream connection and turns each
// lifecycle line into invalidations; a spectator (the stream is operator-gated) polls instead,
// and only while the tab is visible. A dropped stream reconnects with backoff and, since lines
// may have been missed meanwhile, refreshes everything on screen.
import { signal } from '@preact/signals';
import { ApiError, readNdjson } from './client.ts';
import { invalidate } from './cache.ts';
import { checkReadiness } from './readiness.ts';
import type { LifecycleLine } from './types.ts';

export type LiveMode = 'connecting' | 'live' | 'polling' | 'offline';
/** How the tab is kept fresh right now (shown in the header). */
export const liveMode = signal<LiveMode>('connecting');
/** A spectator's polls, as a counter: what cannot be followed is re-read on each. */
export const pollTick = signal(0);

export const SPECTATOR_POLL_MS = 10_000;
const COALESCE_MS = 150;
const MAX_BACKOFF_MS = 30_000;

/** Which cached paths a change of these runs makes stale. */
export function stalePaths(runIds: Set<string>): (path: string) => boolean {
  return (path) =>
    path === '/runs' ||
    path.startsWith('/runs?') ||
    [...runIds].some((id) => path === `/runs/${encodeURIComponent(id)}`) ||
    path.startsWith('/plan-runs') ||
    path.startsWith('/ops/') ||
    // A trigger that fired shows its new last run.
    /^\/projects\/[^/]+\/triggers$/.test(path);
}

const everything = (path: string) => !path.startsWith('/analytics/');

/** Starts keeping this tab fresh; answers a stop function. */
export function startLiveUpdates(isOperator: boolean): () => void {
  const stop = new AbortController();
  if (isOperator) void holdStream(stop.signal);
  else pollWhileVisible(stop.signal);
  return () => stop.abort();
}

async function holdStream(stopped: AbortSignal): Promise<void> {
  let backoff = 1000;
  let pending = new Set<string>();
  let flush: ReturnType<typeof setTimeout> | undefined;
  const onLine = (line: LifecycleLine) => {
    liveMode.value = 'live';
    pending.add(line.runId);
    flush ??= setTimeout(() => {
      const runIds = pending;
      pending = new Set();
      flush = undefined;
      invalidate(stalePaths(runIds));
    }, COALESCE_MS);
  };
  let first = true;
  while (!stopped.aborted) {
    liveMode.value = first ? 'connecting' : 'offline';
    const connection = new AbortController();
    stopped.addEventListener('abort', () => connection.abort(), { once: true });
    const reconnected = !first;
    first = false;
    try {
      // The server flushes the headers at once: from then on the tab is live.
      await readNdjson<LifecycleLine>('/events/stream', onLine, connection.signal, () => {
        liveMode.value = 'live';
        backoff = 1000;
        if (reconnected) {
          invalidate(everything);
          void checkReadiness();
        }
      });
    } catch (error) {
      if (stopped.aborted) return;
      const retryAfter = error instanceof ApiError && error.code === 'event_stream_capacity' ? 15_000 : 0;
      backoff = Math.min(MAX_BACKOFF_MS, Math.max(backoff * 2, retryAfter));
    }
    if (stopped.aborted) return;
    liveMode.value = 'offline';
    await new Promise((resolve) => setTimeout(resolve, backoff));
  }
}

function pollWhileVisible(stopped: AbortSignal): void {
  liveMode.value = 'polling';
  const poll = () => {
    if (document.visibilityState !== 'visible') return;
    pollTick.value++;
    invalidate(everything);
  };
  const timer = setInterval(poll, SPECTATOR_POLL_MS);
  const onVisible = () => poll();
  document.addEventListener('visibilitychange', onVisible);
  stopped.addEventListener('abort', () => {
    clearInterval(timer);
    document.removeEventListener('visibilitychange', onVisible);
  });
}
