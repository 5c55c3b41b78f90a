// A run event as one line of a plain-text log (GET /runs/{id}/log): its millisecond timestamp, a
// short tag and its human line (core/event-text.ts), agent output made inert for any viewer.
import { describeRunEvent, type RenderableEvent } from './event-text.ts';

/** SGR (colour) sequences carry nothing a plain log keeps. */
const SGR = /\u001b\[[0-9;:]*m/g;
/** Every other control character (C0 but tab, DEL, C1) and the Unicode line and paragraph separators. */
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029]/g;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\u001b': '\\e' };

/**
 * Text an agent wrote, on one inert line: colours dropped, every other control character (escape
 * sequences, newlines, bells) written out as `\n`, `\e`, `\u0007`…, so no terminal or viewer obeys it.
 */
export function inertText(text: string): string {
  return text
    .replace(SGR, '')
    .replace(CONTROL, (char) => NAMED[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The tag of a line: whose output, or how svc's news reads. */
function tag(event: RenderableEvent, tone: ReturnType<typeof describeRunEvent>['tone']): string {
  if (tone === 'output') return event.kind === 'log.stderr' || event.stream === 'stderr' ? 'err' : 'out';
  // An agent's own report (a tool call, a permission it was given) is its word, not svc's.
  if (tone === 'info' && event.kind.startsWith('agent.')) return 'agent';
  return tone === 'info' ? 'svc' : tone;
}

/** `2026-12-02T10:00:00.123Z out   the agent's line` (no newline). */
export function plainLogLine(event: RenderableEvent & { ts: string }): string {
  const line = describeRunEvent(event);
  return `${event.ts} ${tag(event, line.tone).padEnd(5)} ${inertText(line.text)}`;
}
