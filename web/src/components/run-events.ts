// A run's event log for its page: the last page first (GET /runs/{id}/events?before=), earlier
// pages on demand back to the first event, and live lines over one stream that resumes from the
// last seq it saw. Lines beyond what the page keeps are let go from the top, to be paged back in.
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { readNdjson } from '../api/client.ts';
import type { RunEvent } from '../api/types.ts';

/** One page of history. */
export const PAGE_LINES = 500;
/** What the page keeps while lines stream in; older ones come back with "load earlier". */
const KEEP_LINES = 5000;
/** The API's "from the end" cursor. */
const END = Number.MAX_SAFE_INTEGER;

export interface TailState {
  events: RunEvent[];
  /** Lines let go without a way back (a plan-run's tail, which has no backward cursor). */
  dropped: number;
  streaming: boolean;
  /** Earlier lines of the log exist and can be read (a run's tail). */
  earlier?: { more: boolean; loading: boolean; load: () => void };
  /** The whole log as text (GET /runs/{id}/log), for a download. */
  logPath?: string;
}

const eventsPath = (runId: string, query: string) => `/runs/${encodeURIComponent(runId)}/events?${query}`;

async function readPage(runId: string, before: number, signal?: AbortSignal): Promise<RunEvent[]> {
  const lines: RunEvent[] = [];
  const stop = signal ?? new AbortController().signal;
  await readNdjson<RunEvent>(eventsPath(runId, `before=${before}&limit=${PAGE_LINES}`), (e) => lines.push(e), stop);
  return lines;
}

/**
 * Follows the run's events; `live` false reads what is new once (a terminal run's, or a
 * spectator's, whose reads never follow: a new `rereadKey` reads again), null waits.
 */
export function useRunEvents(runId: string, live: boolean | null, rereadKey = 0): TailState {
  const [events, setEvents] = useState<RunEvent[]>([]);
  const [more, setMore] = useState(false);
  const [loading, setLoading] = useState(false);
  const [streaming, setStreaming] = useState(false);
  const lastSeq = useRef(0);
  const opened = useRef(false);
  useEffect(() => {
    lastSeq.current = 0;
    opened.current = false;
    setEvents([]);
    setMore(false);
  }, [runId]);
  useEffect(() => {
    if (live === null) return;
    const stop = new AbortController();
    let batch: RunEvent[] = [];
    let scheduled = 0;
    const flush = () => {
      scheduled = 0;
      const arrived = batch;
      batch = [];
      setEvents((previous) => {
        const all = previous.concat(arrived);
        if (all.length <= KEEP_LINES) return all;
        setMore(true);
        return all.slice(all.length - KEEP_LINES);
      });
    };
    const onLine = (event: RunEvent) => {
      if (event.seq <= lastSeq.current) return;
      lastSeq.current = event.seq;
      batch.push(event);
      // One render per frame, however fast lines arrive.
      scheduled ||= requestAnimationFrame(flush);
    };
    const follow = async () => {
      let backoff = 1000;
      for (;;) {
        setStreaming(Boolean(live));
        try {
          if (!opened.current) {
            // The log's last page: a long log opens at its end, its start a few clicks away.
            const page = await readPage(runId, END, stop.signal);
            opened.current = true;
            setMore(page.length === PAGE_LINES);
            page.forEach(onLine);
          }
          const since = `since=${lastSeq.current}${live ? '' : '&follow=0'}`;
          await readNdjson<RunEvent>(eventsPath(runId, since), onLine, stop.signal);
          backoff = 1000;
        } catch {
          backoff = Math.min(backoff * 2, 15_000);
        }
        if (stop.signal.aborted || !live) break;
        // The stream ended: the run ended (the page re-reads it and stops following) or svc restarted.
        await new Promise((resolve) => setTimeout(resolve, backoff));
        if (stop.signal.aborted) break;
      }
      setStreaming(false);
    };
    void follow();
    return () => {
      stop.abort();
      if (scheduled) cancelAnimationFrame(scheduled);
      // Lines not yet shown are read again by the next stream.
      if (batch.length) lastSeq.current = batch[0]!.seq - 1;
    };
  }, [runId, live, rereadKey]);

  const first = events[0]?.seq;
  const load = useCallback(() => {
    if (first === undefined || loading) return;
    setLoading(true);
    readPage(runId, first)
      .then((page) => {
        setEvents((previous) => (previous[0]?.seq === first ? page.concat(previous) : previous));
        setMore(page.length === PAGE_LINES);
      })
      .catch(() => undefined)
      .finally(() => setLoading(false));
  }, [runId, first, loading]);

  return {
    events,
    dropped: 0,
    streaming,
    earlier: { more, loading, load },
    logPath: `/runs/${encodeURIComponent(runId)}/log`,
  };
}
