// The analytics use-cases behind GET /analytics/runs and GET /analytics/cost: the window rules
// (defaults, the 90-day cap, bad dates), the scope a spectator may see, and the shaping of the
// repository's SQL aggregates into the spec's shapes. Every sum, count, average and percentile is
// computed by the database; here only rates (ratios of its counts) and the order of buckets.
import type { AnalyticsRepository, AnalyticsScope, RunBucketRow } from '../../db/repositories/analytics.repository.ts';
import { Errors } from '../errors.ts';
import {
  COST_BASIS_KEYS,
  ISO_DATE_OR_DATETIME,
  type AnalyticsQuery,
  type CostAnalytics,
  type CostBucket,
  type CostPerMergedPr,
  type GroupBucket,
  type KeyedCostPerMergedPr,
  type RunAnalytics,
  type SpectatorRunAnalytics,
  type SteeringSide,
} from '../routes/analytics.schema.ts';

const DAY_MS = 86_400_000;
export const DEFAULT_WINDOW_DAYS = 30;
export const MAX_WINDOW_DAYS = 90;
/** The key of a bucket of runs that have no value for it. */
export const NO_KEY = '__none__';

/** The window an analytics answer covers: runs created in [fromMs, toMs]. */
export interface AnalyticsWindow {
  fromMs: number;
  toMs: number;
  projectId: string | null;
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

const keyOf = (row: { key: string | null }) => row.key ?? NO_KEY;
const ratio = (part: number, whole: number) => (whole > 0 ? part / whole : null);
const terminalOf = (row: RunBucketRow) => row.succeeded + row.failed + row.cancelled;
const tokensOf = (row: RunBucketRow) => ({
  ...row.tokens,
  total: Object.values(row.tokens).reduce((a, b) => a + b, 0),
});

/** Keys in code-point order: the same whatever the locale. */
const compareKeys = (a: { key: string }, b: { key: string }) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** Biggest spend first; ties by more runs, then by key, so the order is the same on both databases. */
function byCost<T extends { key: string; costUsd: number; runs?: number }>(buckets: T[]): T[] {
  return buckets.sort((a, b) => b.costUsd - a.costUsd || (b.runs ?? 0) - (a.runs ?? 0) || compareKeys(a, b));
}

function byRuns<T extends { key: string; runs: number }>(buckets: T[]): T[] {
  return buckets.sort((a, b) => b.runs - a.runs || compareKeys(a, b));
}

function oldestFirst<T extends { key: string }>(buckets: T[]): T[] {
  return buckets.sort(compareKeys);
}

function costBucket(row: RunBucketRow): CostBucket {
  return { key: keyOf(row), costUsd: row.costUsd, runs: row.runs, priced: row.priced };
}

function groupBucket(row: RunBucketRow): GroupBucket {
  return {
    key: keyOf(row),
    runs: row.runs,
    succeeded: row.succeeded,
    failed: row.failed,
    cancelled: row.cancelled,
    successRate: ratio(row.succeeded, terminalOf(row)),
    prStateKnown: row.prStateKnown,
    prsMerged: row.prsMerged,
    mergedPrRate: ratio(row.prsMerged, row.prStateKnown),
    tokens: tokensOf(row),
    costUsd: row.costUsd,
    priced: row.priced,
    avgDurationMs: row.avgDurationMs,
  };
}

function costPerMergedPr(row: RunBucketRow): CostPerMergedPr {
  return {
    costUsd: row.costUsd,
    priced: row.priced,
    prStateKnown: row.prStateKnown,
    prsMerged: row.prsMerged,
    costPerMergedPrUsd: ratio(row.costUsd, row.prsMerged),
  };
}

const keyedCostPerMergedPr = (rows: RunBucketRow[]): KeyedCostPerMergedPr[] =>
  byCost(rows.map((row) => ({ key: keyOf(row), ...costPerMergedPr(row) })));

function steeringSide(row: RunBucketRow | undefined): SteeringSide {
  if (!row)
    return { runs: 0, terminal: 0, succeeded: 0, successRate: null, prStateKnown: 0, prsMerged: 0, mergedPrRate: null };
  return {
    runs: row.runs,
    terminal: terminalOf(row),
    succeeded: row.succeeded,
    successRate: ratio(row.succeeded, terminalOf(row)),
    prStateKnown: row.prStateKnown,
    prsMerged: row.prsMerged,
    mergedPrRate: ratio(row.prsMerged, row.prStateKnown),
  };
}

/** The spectators' copy: no USD figure anywhere (totals, buckets, cost per merged PR). */
export function withoutCosts(analytics: RunAnalytics): SpectatorRunAnalytics {
  const publicBucket = ({ costUsd: _cost, priced: _priced, ...bucket }: GroupBucket) => bucket;
  const { costUsd: _costUsd, cost: _cost, ...totals } = analytics.totals;
  const { costPerMergedPr: _perPr, ...outcomes } = analytics.outcomes;
  return {
    ...analytics,
    totals,
    byAgent: analytics.byAgent.map(publicBucket),
    byModel: analytics.byModel.map(publicBucket),
    byProvider: analytics.byProvider.map(publicBucket),
    outcomes,
  };
}

/**
 * Run and cost analytics over a window of runs (by creation time), computed in SQL by the
 * repository on either database and shaped here. Spectators see only their visible projects and
 * no USD figure.
 */
export class AnalyticsService {
  readonly #rows: AnalyticsRepository;
  readonly #now: () => number;

  constructor(rows: AnalyticsRepository, now: () => number = Date.now) {
    this.#rows = rows;
    this.#now = now;
  }

  #scope(query: AnalyticsQuery, onlyProjects?: Set<string>) {
    const window = resolveWindow(query, this.#now());
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

  /** Spend over the window: totals, the breakdowns and the cost bases (operator only). */
  async cost(query: AnalyticsQuery): Promise<CostAnalytics> {
    const { scope, filter } = this.#scope(query);
    const rows = this.#rows;
    const [totals, date, project, plan, agent, model, provider, bases, costliest] = await Promise.all([
      rows.totals(scope),
      rows.buckets(scope, 'day'),
      rows.buckets(scope, 'project'),
      rows.buckets(scope, 'plan'),
      rows.buckets(scope, 'agent'),
      rows.buckets(scope, 'model'),
      rows.buckets(scope, 'provider'),
      rows.buckets(scope, 'costBasis'),
      rows.costliestRuns(scope),
    ]);
    const basis = new Map(bases.map((row) => [row.key, row]));
    return {
      filter,
      totals: { runs: totals.runs, priced: totals.priced, costUsd: totals.costUsd },
      breakdowns: {
        date: oldestFirst(date.map(costBucket)),
        project: byCost(project.map(costBucket)),
        plan: byCost(plan.map(costBucket)),
        run: costliest.map((run) => ({ key: run.id, costUsd: run.costUsd, runs: 1, priced: 1 })),
        agent: byCost(agent.map(costBucket)),
        model: byCost(model.map(costBucket)),
        provider: byCost(provider.map(costBucket)),
      },
      byCostBasis: COST_BASIS_KEYS.map((key) => ({
        key,
        runs: basis.get(key)?.runs ?? 0,
        costUsd: basis.get(key)?.costUsd ?? 0,
      })),
    };
  }

  /** The operator's run analytics over the window. */
  async runs(query: AnalyticsQuery): Promise<RunAnalytics> {
    const { scope, filter } = this.#scope(query);
    return this.#runAnalytics(scope, filter);
  }

  /** A spectator's run analytics: only their visible projects' runs, and no USD figure. */
  async runsForSpectator(query: AnalyticsQuery, visibleProjects: Set<string>): Promise<SpectatorRunAnalytics> {
    const { scope, filter } = this.#scope(query, visibleProjects);
    return withoutCosts(await this.#runAnalytics(scope, filter));
  }

  async #runAnalytics(scope: AnalyticsScope, filter: RunAnalytics['filter']): Promise<RunAnalytics> {
    const rows = this.#rows;
    const [totals, dists, days, agent, model, provider, project, steering, failures] = await Promise.all([
      rows.totals(scope),
      rows.distributions(scope),
      rows.buckets(scope, 'day'),
      rows.buckets(scope, 'agent'),
      rows.buckets(scope, 'model'),
      rows.buckets(scope, 'provider'),
      rows.buckets(scope, 'project'),
      rows.buckets(scope, 'steering'),
      rows.failureReasons(scope),
    ]);
    const overall = groupBucket(totals);
    return {
      filter,
      totals: {
        runs: totals.runs,
        succeeded: totals.succeeded,
        failed: totals.failed,
        cancelled: totals.cancelled,
        active: totals.active,
        successRate: overall.successRate,
        prStateKnown: totals.prStateKnown,
        prsMerged: totals.prsMerged,
        mergedPrRate: overall.mergedPrRate,
        durationMs: dists.durationMs,
        queueWaitMs: dists.queueWaitMs,
        tokens: overall.tokens,
        costUsd: dists.costUsd,
        cost: { total: totals.costUsd, avg: ratio(totals.costUsd, totals.priced), priced: totals.priced },
      },
      timeSeries: oldestFirst(
        days.map((row) => ({
          key: keyOf(row),
          runs: row.runs,
          succeeded: row.succeeded,
          failed: row.failed,
          cancelled: row.cancelled,
          active: row.active,
        })),
      ),
      byAgent: byRuns(agent.map(groupBucket)),
      byModel: byRuns(model.map(groupBucket)),
      byProvider: byRuns(provider.map(groupBucket)),
      byFailureReason: byRuns(failures.map((row) => ({ key: keyOf(row), runs: row.runs }))),
      outcomes: {
        costPerMergedPr: {
          overall: costPerMergedPr(totals),
          byAgent: keyedCostPerMergedPr(agent),
          byModel: keyedCostPerMergedPr(model),
          byProvider: keyedCostPerMergedPr(provider),
          byProject: keyedCostPerMergedPr(project),
        },
        timeToMergeMs: dists.timeToMergeMs,
        steering: {
          steered: steeringSide(steering.find((row) => row.key === 'steered')),
          unsteered: steeringSide(steering.find((row) => row.key === 'unsteered')),
        },
      },
    };
  }
}
