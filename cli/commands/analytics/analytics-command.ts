// What the `svc analytics` commands share: the window options (--from, --to, --project) turned
// into the query of GET /analytics/<verb>, one JSON line by default, and the pieces of their
// `--output pretty` text (the window's header line, percentages, USD, durations).
import { Option } from 'clipanion';
import * as t from 'typanion';
import { ISO_DATE_OR_DATETIME } from '../../../api/routes/analytics.schema.ts';
import { EXIT, RemoteCommand } from '../../base-command.ts';
import { resolveProject } from '../../client/projects.ts';

/** The window rules of every analytics route, for the commands' `details`. */
export const WINDOW_DETAILS =
  'The window is runs created from `--from` to `--to` (ISO dates or datetimes; a date covers its whole UTC ' +
  'day): `--to` defaults to now, `--from` to 30 days before, and a span over 90 days is cut to the last 90. ' +
  '`--project` keeps one project.';

/** An ISO date or datetime, as the routes accept it: a mistake is a usage error before any request. */
const isInstant = t.cascade(t.isString(), t.matchesRegExp(ISO_DATE_OR_DATETIME));

export abstract class AnalyticsCommand<Answer> extends RemoteCommand {
  from = Option.String('--from', {
    description: 'start of the window: 2026-11-01 or 2026-11-01T08:00Z (default: --to minus 30 days)',
    validator: isInstant,
  });
  to = Option.String('--to', {
    description: 'end of the window, included (default: now)',
    validator: isInstant,
  });
  project = Option.String('--project', { description: 'only this project: its id (prj_…) or owner/repo' });

  /** The route's last segment: GET /analytics/<verb>. */
  protected abstract readonly verb: string;
  /** The answer as text lines, for `--output pretty`. */
  protected abstract pretty(answer: Answer): string[];

  protected async run(): Promise<number> {
    const query = new URLSearchParams({
      ...(this.from ? { from: this.from } : {}),
      ...(this.to ? { to: this.to } : {}),
      ...(this.project ? { projectId: await resolveProject(this.client, this.project) } : {}),
    }).toString();
    const answer = await this.client.request<Answer>('GET', `/analytics/${this.verb}${query ? `?${query}` : ''}`);
    if (this.output === 'pretty') for (const text of this.pretty(answer)) this.line(text);
    else this.line(answer);
    return EXIT.ok;
  }
}

/** `<title>: <from> → <to>, <project or all projects>`. */
export function windowLine(title: string, filter: { from: string; to: string; projectId: string | null }): string {
  const scope = filter.projectId ? `project ${filter.projectId}` : 'all projects';
  return `${title}: ${filter.from} → ${filter.to}, ${scope}`;
}

/** A share as a whole percentage; `—` for none. */
export const percent = (share: number | null | undefined) =>
  share === null || share === undefined ? '—' : `${Math.round(share * 100)}%`;

export const usd = (value: number) => `$${value.toFixed(2)}`;

/** Milliseconds in the largest unit that keeps the number readable; `—` for none. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
  ] as const)
    if (ms >= size) return `${(ms / size).toFixed(1)}${unit}`;
  return `${(ms / 1000).toFixed(1)}s`;
}

/** `median X, p95 Y (n)` of a distribution of milliseconds. */
export const spread = (dist: { median: number | null; p95: number | null; count: number }) =>
  `median ${duration(dist.median)}, p95 ${duration(dist.p95)} (${dist.count})`;

/** A titled block: an empty line, the title, then the table or `(none)`. */
export function block(title: string, rows: string[][], render: (rows: string[][]) => string): string[] {
  return ['', title, rows.length ? render(rows) : '(none)'];
}
