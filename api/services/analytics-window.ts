// The window rules every analytics route shares: `to` defaults to now, `from` to 30 days before,
// a longer span than 90 days pulls `from` forward, and a bad date is a validation error. The
// resolved window becomes the repository's scope and the answer's `filter`.
import type { AnalyticsScope } from '../../db/repositories/analytics.repository.ts';
import { Errors } from '../errors.ts';
import { ISO_DATE_OR_DATETIME, type AnalyticsQuery } from '../routes/analytics.schema.ts';

const DAY_MS = 86_400_000;
export const DEFAULT_WINDOW_DAYS = 30;
export const MAX_WINDOW_DAYS = 90;

/** The window an analytics answer covers: runs created in [fromMs, toMs]. */
export interface AnalyticsWindow {
  fromMs: number;
  toMs: number;
  projectId: string | null;
}

/** The window as an answer echoes it. */
export interface AnalyticsFilter {
  projectId: string | null;
  from: string;
  to: string;
}

/**
 * One bound of the window, in epoch ms. A date alone means the start of its UTC day for `from` and
 * the end of it for `to` (so `to=2026-11-22` includes that day); a datetime without zone is UTC.
 */
function parseBound(name: 'from' | 'to', value: string): number {
  const invalid = () =>
    Errors.validation(
      `invalid ${name}: "${value.slice(0, 64)}"`,
      'use an ISO date (2026-11-22) or datetime (…T10:00Z)',
    );
  const match = ISO_DATE_OR_DATETIME.exec(value);
  if (!match) throw invalid();
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map((part) => Number(part ?? 0));
  // setUTCFullYear, not Date.UTC: the latter reads years 0–99 as 1900–1999.
  const dayStart = new Date(0).setUTCFullYear(year!, month! - 1, day!);
  const calendar = new Date(dayStart);
  if (calendar.getUTCMonth() !== month! - 1 || calendar.getUTCDate() !== day!) throw invalid();
  if (match[4] === undefined) return name === 'from' ? dayStart : dayStart + DAY_MS - 1;
  if (hour! > 23 || minute! > 59 || second! > 59) throw invalid();
  const ms = Date.parse(match[7] === undefined ? `${value}Z` : value);
  if (Number.isNaN(ms)) throw invalid();
  return ms;
}

/** `to` defaults to now, `from` to `to` − 30 days; a longer span than 90 days pulls `from` forward. */
export function resolveWindow(query: AnalyticsQuery, nowMs: number): AnalyticsWindow {
  const toMs = query.to === undefined ? nowMs : parseBound('to', query.to);
  const fromMs = query.from === undefined ? toMs - DEFAULT_WINDOW_DAYS * DAY_MS : parseBound('from', query.from);
  if (fromMs > toMs)
    throw Errors.validation(`from (${query.from}) is after to (${query.to ?? 'now'})`, 'swap them, or leave one out');
  return { fromMs: Math.max(fromMs, toMs - MAX_WINDOW_DAYS * DAY_MS), toMs, projectId: query.projectId ?? null };
}

/** The repository scope and the echoed filter of a query (a spectator's: only their visible projects). */
export function scopeOf(
  query: AnalyticsQuery,
  nowMs: number,
  onlyProjects?: Set<string>,
): { scope: AnalyticsScope; filter: AnalyticsFilter } {
  const window = resolveWindow(query, nowMs);
  const scope: AnalyticsScope = {
    fromMs: window.fromMs,
    toMs: window.toMs,
    ...(window.projectId === null ? {} : { projectId: window.projectId }),
    ...(onlyProjects ? { onlyProjects } : {}),
  };
  const filter = {
    projectId: window.projectId,
    from: new Date(window.fromMs).toISOString(),
    to: new Date(window.toMs).toISOString(),
  };
  return { scope, filter };
}
