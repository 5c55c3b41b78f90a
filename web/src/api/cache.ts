// A small read cache keyed by API path. Pages read through useQuery; the lifecycle stream (or a
// spectator's poll) marks entries stale and the mounted ones refetch, so lists follow the truth
// without timers. Old data stays on screen while a refetch runs: nothing jumps.
import { useEffect, useState } from 'preact/hooks';
import { ApiError, getJson } from './client.ts';

interface Entry {
  data?: unknown;
  error?: ApiError;
  inFlight?: Promise<void>;
  stale: boolean;
  listeners: Set<() => void>;
}

const entries = new Map<string, Entry>();

function entryOf(path: string): Entry {
  let entry = entries.get(path);
  if (!entry) entries.set(path, (entry = { stale: true, listeners: new Set() }));
  return entry;
}

function load(path: string, entry: Entry): Promise<void> {
  entry.inFlight ??= getJson(path)
    .then(
      (data) => {
        entry.data = data;
        entry.error = undefined;
      },
      (error: unknown) => {
        entry.error = error instanceof ApiError ? error : new ApiError(0, 'client_error', String(error));
      },
    )
    .finally(() => {
      entry.inFlight = undefined;
      entry.listeners.forEach((listener) => listener());
    });
  entry.stale = false;
  return entry.inFlight;
}

/** Marks stale every cached path the predicate picks; the ones on screen refetch at once. */
export function invalidate(picks: (path: string) => boolean): void {
  for (const [path, entry] of entries) {
    if (!picks(path)) continue;
    if (entry.listeners.size > 0) void load(path, entry);
    else entry.stale = true;
  }
}

/** Forgets everything (after signing in or out: what a reader may see changed). */
export function clearCache(): void {
  for (const [path, entry] of entries) {
    if (entry.listeners.size > 0) void load(path, entry);
    else entries.delete(path);
  }
}

export interface Query<T> {
  data: T | undefined;
  error: ApiError | undefined;
  loading: boolean;
  reload(): Promise<void>;
}

/** The JSON at `path` (null: nothing to load), kept fresh by invalidate(). */
export function useQuery<T>(path: string | null): Query<T> {
  const [, rerender] = useState(0);
  useEffect(() => {
    if (!path) return;
    const entry = entryOf(path);
    const listener = () => rerender((n) => n + 1);
    entry.listeners.add(listener);
    if (entry.stale || entry.error) void load(path, entry);
    return () => entry.listeners.delete(listener);
  }, [path]);
  const entry = path ? entries.get(path) : undefined;
  return {
    data: entry?.data as T | undefined,
    error: entry?.error,
    loading: Boolean(path) && (!entry || entry.inFlight !== undefined) && entry?.data === undefined,
    reload: () => (path ? load(path, entryOf(path)) : Promise.resolve()),
  };
}
