// How a run and its events read as text: the table row of `svc runs list`, the lines of `svc runs
// show`, one event line of `svc runs logs` and `svc run`.
import { describeRunEvent, type EventTone } from '../../../core/event-text.ts';
import type { RunJson } from '../../../core/run-schema.ts';
import { stateColour, type Colour } from '../../terminal-text.ts';
import { duration } from '../analytics/analytics-command.ts';

export interface RunEvent {
  seq: number;
  ts: string;
  kind: string;
  stream: string | null;
  payload?: unknown;
}

/** One event as a line: its time (UTC) and what it says (core/event-text.ts). */
export function eventText(event: RunEvent): string {
  return `${event.ts.slice(11, 19)} ${describeRunEvent(event).text}`;
}

const TONE_COLOURS: Record<EventTone, Colour | undefined> = {
  info: 'dim',
  warn: 'yellow',
  error: 'red',
  output: undefined,
};

/** svc's news dim, warnings and failures in colour, the agent's output plain; a run's end in its state's. */
export function eventColour(event: RunEvent): Colour | undefined {
  const payload = event.payload as { type?: unknown; state?: unknown } | undefined;
  if (event.kind === 'state_change' && payload?.type === 'result' && typeof payload.state === 'string')
    return stateColour(payload.state);
  return TONE_COLOURS[describeRunEvent(event).tone];
}

/** `2m ago`, from a time in ms or an ISO string; `—` for none. */
export function age(at: number | string | null, now = Date.now()): string {
  if (at === null) return '—';
  const ms = now - (typeof at === 'number' ? at : Date.parse(at));
  return Number.isNaN(ms) ? '—' : `${duration(Math.max(0, ms))} ago`;
}

const usd = (cost: number | null) => (cost === null ? '—' : `$${cost.toFixed(2)}`);

/** The first line of a prompt, cut to `width` characters. */
export function headline(prompt: string, width = 48): string {
  const first = prompt.trim().split('\n')[0] ?? '';
  return first.length > width || prompt.trim().includes('\n') ? `${first.slice(0, width - 1)}…` : first;
}

export const RUN_TABLE_HEADERS = ['ID', 'STATE', 'AGENT', 'PROJECT', 'CREATED', 'COST', 'PROMPT'];

export function runRow(run: RunJson, projectName: (id: string | null) => string, now = Date.now()): string[] {
  return [
    run.id,
    run.state,
    run.agentName,
    projectName(run.projectId),
    age(run.createdAt, now),
    usd(run.costUsd),
    headline(run.prompt),
  ];
}

/** `svc runs show`: the run as `label: value` lines, the unknown ones left out. */
export function runDetail(
  run: RunJson,
  projectName: string,
  links: Record<string, string | null | undefined>,
): string[] {
  const ran = run.startedAt && run.endedAt ? duration(Date.parse(run.endedAt) - Date.parse(run.startedAt)) : null;
  const tokens =
    run.tokensInput === null && run.tokensOutput === null
      ? null
      : `${run.tokensInput ?? 0} in, ${run.tokensOutput ?? 0} out`;
  const changes =
    run.filesChanged === null
      ? null
      : `${run.commitsAhead ?? 0} commits, ${run.filesChanged} files, +${run.insertions ?? 0} −${run.deletions ?? 0}`;
  const fields: [string, string | number | null][] = [
    ['state', [run.state, run.failureReason, run.queueReason, run.pausedReason].filter(Boolean).join(' — ')],
    ['agent', [run.agentName, run.provider, run.model].filter(Boolean).join(' · ')],
    ['project', projectName],
    ['trigger', run.trigger],
    ['created', run.createdAt === null ? null : new Date(run.createdAt).toISOString()],
    ['started', run.startedAt],
    ['ended', run.endedAt],
    ['duration', ran],
    ['cost', run.costUsd === null ? null : usd(run.costUsd)],
    ['tokens', tokens],
    ['branch', run.targetBranch],
    ['changes', changes],
    ['pull request', run.prUrl ? `${run.prUrl}${run.prState ? ` (${run.prState})` : ''}` : null],
    ['salvage', run.salvageRef ?? run.salvagePath],
    ['parent', run.parentRunId],
    ['seed', run.seedId],
    ...Object.entries(links).map(([name, link]): [string, string | null] => [words(name), link ?? null]),
  ];
  const shown = fields.filter((field): field is [string, string | number] => field[1] !== null && field[1] !== '');
  const width = Math.max(...shown.map(([label]) => label.length)) + 1;
  const prompt = run.prompt.split('\n').map((line) => `  ${line}`);
  return [
    `run ${run.id}`,
    ...shown.map(([label, value]) => `${`${label}:`.padEnd(width)} ${value}`),
    'prompt:',
    ...prompt,
  ];
}

/** `temporalUi` → `temporal ui`. */
const words = (name: string) => name.replace(/([A-Z])/g, ' $1').toLowerCase();
