// A plan-run's events: every child run's lines over one GET /plan-runs/{id}/events stream. That
// stream has no resume cursor, so each (re)connect replays the history; lines already seen (per run,
// by seq) are dropped here. Same fixed-height, bottom-pinned box as a run's tail.
import { useEffect, useRef, useState } from 'preact/hooks';
import { readNdjson } from '../api/client.ts';
import type { RunEvent } from '../api/types.ts';
import type { TailState } from './run-events.ts';

const KEEP_LINES = 2000;

/**
 * Follows the plan-run's events; `live` false reads the history once (and again whenever `revision`
 * changes: spectators may not follow, so they re-read as the plan-run changes), null waits.
 */
export function usePlanRunEvents(planRunId: string, live: boolean | null, revision?: unknown): TailState {
  const [state, setState] = useState<TailState>({ events: [], dropped: 0, streaming: false });
  const seen = useRef(new Map<string, number>());
  useEffect(() => {
    seen.current = new Map();
    setState({ events: [], dropped: 0, streaming: false });
  }, [planRunId]);
  useEffect(() => {
    if (live === null) return;
    const stop = new AbortController();
    let batch: RunEvent[] = [];
    let scheduled = 0;
    const flush = () => {
      scheduled = 0;
      const arrived = batch;
      batch = [];
      setState((previous) => {
        const all = previous.events.concat(arrived);
        const excess = Math.max(0, all.length - KEEP_LINES);
        return {
          events: excess ? all.slice(excess) : all,
          dropped: previous.dropped + excess,
          streaming: previous.streaming,
        };
      });
    };
    const onLine = (event: RunEvent) => {
      if (event.seq <= (seen.current.get(event.runId) ?? 0)) return;
      seen.current.set(event.runId, event.seq);
      batch.push(event);
      // One render per frame, however fast lines arrive.
      scheduled ||= requestAnimationFrame(flush);
    };
    const path = `/plan-runs/${encodeURIComponent(planRunId)}/events?follow=${live ? 1 : 0}`;
    const follow = async () => {
      let backoff = 1000;
      for (;;) {
        setState((previous) => ({ ...previous, streaming: live }));
        try {
          await readNdjson<RunEvent>(path, onLine, stop.signal);
          backoff = 1000;
        } catch {
          backoff = Math.min(backoff * 2, 15_000);
        }
        if (stop.signal.aborted || !live) break;
        // The stream ended: the plan-run ended (the page re-reads it and stops following) or svc restarted.
        await new Promise((resolve) => setTimeout(resolve, backoff));
        if (stop.signal.aborted) break;
      }
      setState((previous) => ({ ...previous, streaming: false }));
    };
    void follow();
    return () => {
      stop.abort();
      if (scheduled) cancelAnimationFrame(scheduled);
      // Lines not yet shown are forgotten as seen, so the next read (which replays all) brings them again.
      const rolledBack = new Set<string>();
      for (const event of batch) {
        if (rolledBack.has(event.runId)) continue;
        rolledBack.add(event.runId);
        seen.current.set(event.runId, event.seq - 1);
      }
    };
  }, [planRunId, live, revision]);
  return state;
}
