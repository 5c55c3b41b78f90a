// A run's events as they happen: history first, then live lines over one GET /runs/{id}/events
// stream that resumes from the last seq it saw. Fixed height, so streaming never moves the page;
// it sticks to the bottom unless the reader scrolled up.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { readNdjson } from '../api/client.ts';
import type { RunEvent } from '../api/types.ts';

const KEEP_LINES = 2000;

export interface TailState {
  events: RunEvent[];
  dropped: number;
  streaming: boolean;
}

/**
 * Follows the run's events; `live` false reads what is new once (a terminal run's, or a
 * spectator's, whose reads never follow: a new `rereadKey` reads again), null waits.
 */
export function useRunEvents(runId: string, live: boolean | null, rereadKey = 0): TailState {
  const [state, setState] = useState<TailState>({ events: [], dropped: 0, streaming: false });
  const lastSeq = useRef(0);
  useEffect(() => {
    lastSeq.current = 0;
    setState({ events: [], dropped: 0, streaming: false });
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
      if (event.seq <= lastSeq.current) return;
      lastSeq.current = event.seq;
      batch.push(event);
      // One render per frame, however fast lines arrive.
      scheduled ||= requestAnimationFrame(flush);
    };
    const follow = async () => {
      let backoff = 1000;
      for (;;) {
        setState((previous) => ({ ...previous, streaming: Boolean(live) }));
        try {
          await readNdjson<RunEvent>(
            `/runs/${encodeURIComponent(runId)}/events?since=${lastSeq.current}${live ? '' : '&follow=0'}`,
            onLine,
            stop.signal,
          );
          backoff = 1000;
        } catch {
          backoff = Math.min(backoff * 2, 15_000);
        }
        if (stop.signal.aborted || !live) break;
        // The stream ended: the run ended (the page re-reads it and stops following) or svc restarted.
        await new Promise((resolve) => setTimeout(resolve, backoff));
        if (stop.signal.aborted) break;
      }
      setState((previous) => ({ ...previous, streaming: false }));
    };
    void follow();
    return () => {
      stop.abort();
      if (scheduled) cancelAnimationFrame(scheduled);
    };
  }, [runId, live, rereadKey]);
  return state;
}

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  return JSON.stringify(value);
}

/** One event as one line of text: what the agent said or did, else the event kind and its payload. */
export function describeEvent(event: RunEvent): { tone: string; label: string; body: string } {
  const payload = (event.payload ?? {}) as Record<string, unknown>;
  switch (event.kind) {
    case 'log.stdout':
      return { tone: 'stdout', label: 'out', body: text(payload.text) };
    case 'log.stderr':
      return { tone: 'stderr', label: 'err', body: text(payload.text) };
    case 'assistant':
      return { tone: 'assistant', label: 'assistant', body: text(payload.text) };
    case 'tool_use':
      return { tone: 'tool', label: `tool ${text(payload.name)}`, body: text(payload.input) };
    case 'tool_result':
      return { tone: 'tool', label: 'tool result', body: text(payload.output ?? payload.content ?? payload) };
    default:
      return { tone: 'system', label: event.kind, body: Object.keys(payload).length ? text(payload) : '' };
  }
}

/**
 * The tail box. `childLabels` names each run's lines (a plan-run's tail: `#3`, the child they belong
 * to); lines are keyed by run and seq, which together are unique across a plan-run's children.
 */
export function EventTail(props: { tail: TailState; label?: string; childLabels?: Map<string, string> }) {
  const { tail, label = 'Run events', childLabels } = props;
  const box = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);
  useLayoutEffect(() => {
    const element = box.current;
    if (element && pinned.current) element.scrollTop = element.scrollHeight;
  }, [tail.events.length]);
  return (
    <div
      class="tail"
      ref={box}
      role="log"
      aria-live="polite"
      aria-label={label}
      tabIndex={0}
      onScroll={(event) => {
        const element = event.currentTarget;
        pinned.current = element.scrollHeight - element.scrollTop - element.clientHeight < 40;
      }}
    >
      {tail.dropped ? <div class="tail-note">{tail.dropped} earlier lines not shown</div> : null}
      {tail.events.length === 0 ? (
        <div class="tail-note">{tail.streaming ? 'Waiting for output…' : 'No events.'}</div>
      ) : null}
      {tail.events.map((event) => {
        const line = describeEvent(event);
        const child = childLabels?.get(event.runId);
        return (
          <div
            key={`${event.runId}:${event.seq}`}
            class={`tail-line tone-${line.tone}`}
            data-kind={event.kind}
            data-run-id={event.runId}
          >
            <span class="tail-time">{event.ts.slice(11, 19)}</span>
            <span class="tail-label" title={event.runId}>
              {child ? `${child} ${line.label}` : line.label}
            </span>
            <span class="tail-body">{line.body}</span>
          </div>
        );
      })}
    </div>
  );
}
