// A run's (or a plan-run's) event log: one human line per event (core/event-text.ts), agent output
// as a terminal pane with its colours, the raw event one click away, times to the millisecond on
// hover. Fixed height, so streaming never moves the page; it sticks to the bottom unless the reader
// scrolled up, and keeps its place when earlier lines are put above.
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { describeRunEvent } from '../../../core/event-text.ts';
import type { RunEvent } from '../api/types.ts';
import { AnsiText } from './ansi.tsx';
import { LogDownload } from './log-download.tsx';
import type { TailState } from './run-events.ts';

export { useRunEvents, type TailState } from './run-events.ts';

const pad = (value: number, width = 2) => String(value).padStart(width, '0');

/** `14:03:07` local; the title adds the date, the milliseconds and the UTC instant. */
function times(ts: string): { shown: string; full: string } {
  const date = new Date(ts);
  if (Number.isNaN(date.getTime())) return { shown: ts, full: ts };
  const clock = `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
  const day = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
  return { shown: clock, full: `${day} ${clock}.${pad(date.getMilliseconds(), 3)} local (${ts})` };
}

/** The short column before a line: whose output, or how svc's news reads. */
function labelOf(event: RunEvent, tone: string): string {
  // An agent's own report (a tool call, a permission it was given) is its word, not svc's.
  if (tone === 'info' && event.kind.startsWith('agent.')) return 'agent';
  if (tone !== 'output') return tone === 'info' ? 'svc' : tone;
  if (event.kind === 'log.stderr') return 'err';
  return event.kind === 'log.stdout' ? 'out' : 'agent';
}

function EventLine(props: { event: RunEvent; child?: string; raw: boolean; onRaw: () => void }) {
  const { event, child, raw } = props;
  const line = describeRunEvent(event);
  const label = labelOf(event, line.tone);
  const time = times(event.ts);
  return (
    <div
      class={`tail-line tail-${line.tone}${event.kind === 'log.stderr' ? ' tail-stderr' : ''}`}
      data-kind={event.kind}
      data-run-id={event.runId}
      data-seq={event.seq}
    >
      <time class="tail-time" dateTime={event.ts} title={time.full}>
        {time.shown}
      </time>
      <span class="tail-label" title={event.kind}>
        {child ? `${child} ${label}` : label}
      </span>
      <span class="tail-body">{line.tone === 'output' ? <AnsiText text={line.text} /> : line.text}</span>
      <button
        type="button"
        class="tail-raw-toggle"
        aria-expanded={raw}
        aria-label={`Raw event ${event.seq}`}
        title="Show the raw event"
        onClick={props.onRaw}
      >
        {'{}'}
      </button>
      {raw ? <pre class="tail-raw">{JSON.stringify(event, null, 2)}</pre> : null}
    </div>
  );
}

/**
 * The tail box. `childLabels` names each run's lines (a plan-run's tail: `#3`, the child they belong
 * to); lines are keyed by run and seq, which together are unique across a plan-run's children.
 */
export function EventTail(props: { tail: TailState; label?: string; childLabels?: Map<string, string> }) {
  const { tail, label = 'Run events', childLabels } = props;
  const box = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);
  const shape = useRef({ first: '', height: 0 });
  const [raw, setRaw] = useState<ReadonlySet<string>>(new Set());
  const firstKey = tail.events[0] ? `${tail.events[0].runId}:${tail.events[0].seq}` : '';
  useLayoutEffect(() => {
    const element = box.current;
    if (!element) return;
    const before = shape.current;
    if (pinned.current) element.scrollTop = element.scrollHeight;
    // Earlier lines went in above: the reader stays on the lines they were reading.
    else if (before.first && firstKey !== before.first) element.scrollTop += element.scrollHeight - before.height;
    shape.current = { first: firstKey, height: element.scrollHeight };
  }, [tail.events.length, firstKey]);
  const toggle = (key: string) =>
    setRaw((open) => {
      const next = new Set(open);
      if (!next.delete(key)) next.add(key);
      return next;
    });
  const { earlier } = tail;
  return (
    <div class="tail-frame">
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
        {earlier?.more ? (
          <button type="button" class="tail-earlier" disabled={earlier.loading} onClick={earlier.load}>
            {earlier.loading ? 'Loading…' : 'Load earlier lines'}
          </button>
        ) : null}
        {earlier && !earlier.more && tail.events.length ? <div class="tail-note">Start of the log</div> : null}
        {tail.dropped ? <div class="tail-note">{tail.dropped} earlier lines not shown</div> : null}
        {tail.events.length === 0 ? (
          <div class="tail-note">{tail.streaming ? 'Waiting for output…' : 'No events.'}</div>
        ) : null}
        {tail.events.map((event) => {
          const key = `${event.runId}:${event.seq}`;
          return (
            <EventLine
              key={key}
              event={event}
              child={childLabels?.get(event.runId)}
              raw={raw.has(key)}
              onRaw={() => toggle(key)}
            />
          );
        })}
      </div>
      {tail.logPath ? <LogDownload path={tail.logPath} /> : null}
    </div>
  );
}
