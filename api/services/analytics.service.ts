// The analytics use-cases behind GET /analytics/runs, /cost, /dispatch and /behavior: the window
// rules (analytics-window.ts), the scope a spectator may see, and the shaping of the repository's
// SQL aggregates into the spec's shapes. Every sum, count, average and percentile is computed by
// the database; here only rates (ratios of its counts), the order of buckets and derived sentences.
import type {
  AnalyticsRepository,
  AnalyticsScope,
  RunBucketRow,
  RunOutcomeRow,
} from '../../db/repositories/analytics.repository.ts';
import type { BehaviorAnalytics } from '../routes/analytics-behavior.schema.ts';
import type { DispatchAnalytics } from '../routes/analytics-dispatch.schema.ts';
import {
  COST_BASIS_KEYS,
  type AnalyticsQuery,
  type CostAnalytics,
  type CostBucket,
  type CostPerMergedPr,
  type GroupBucket,
  type KeyedCostPerMergedPr,
  type RunAnalytics,
  type SpectatorRunAnalytics,
} from '../routes/analytics.schema.ts';
import { behaviorAnalytics, DEFAULT_BEHAVIOR_SETTINGS, type BehaviorSettings } from './analytics-behavior.ts';
import { byCost, byRuns, keyOf, oldestFirst, outcomeSide, ratio, terminalOf, tokensOf } from './analytics-buckets.ts';
import { dispatchAnalytics } from './analytics-dispatch.ts';
import { scopeOf, type AnalyticsFilter } from './analytics-window.ts';

function costBucket(row: RunBucketRow): CostBucket {
  return { key: keyOf(row), costUsd: row.costUsd, runs: row.runs, priced: row.priced };
}

function groupBucket(row: RunOutcomeRow): GroupBucket {
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

function costPerMergedPr(row: RunOutcomeRow): CostPerMergedPr {
  return {
    costUsd: row.costUsd,
    priced: row.priced,
    prStateKnown: row.prStateKnown,
    prsMerged: row.prsMerged,
    costPerMergedPrUsd: ratio(row.costUsd, row.prsMerged),
  };
}

const keyedCostPerMergedPr = (rows: RunOutcomeRow[]): KeyedCostPerMergedPr[] =>
  byCost(rows.map((row) => ({ key: keyOf(row), ...costPerMergedPr(row) })));

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
 * Run, cost, dispatch and behavior analytics over a window of runs (by creation time), computed in
 * SQL by the repository on either database and shaped here. Spectators see only their visible
 * projects and no USD figure (and only the run analytics).
 */
export class AnalyticsService {
  readonly #rows: AnalyticsRepository;
  readonly #now: () => number;
  readonly #behavior: BehaviorSettings;

  constructor(
    rows: AnalyticsRepository,
    now: () => number = Date.now,
    behavior: BehaviorSettings = DEFAULT_BEHAVIOR_SETTINGS,
  ) {
    this.#rows = rows;
    this.#now = now;
    this.#behavior = behavior;
  }

  #scope(query: AnalyticsQuery, onlyProjects?: Set<string>) {
    return scopeOf(query, this.#now(), onlyProjects);
  }

  /** How the window's runs were dispatched, and the queue now (operator only). */
  async dispatch(query: AnalyticsQuery): Promise<DispatchAnalytics> {
    const { scope, filter } = this.#scope(query);
    return dispatchAnalytics(this.#rows, scope, filter, this.#now());
  }

  /** What the agents of the window's newest runs did, and how it relates to outcomes (operator only). */
  async behavior(query: AnalyticsQuery): Promise<BehaviorAnalytics> {
    const { scope, filter } = this.#scope(query);
    return behaviorAnalytics(this.#rows, scope, filter, this.#behavior);
  }

  /** Spend over the window: totals, the breakdowns and the cost bases (operator only). */
  async cost(query: AnalyticsQuery): Promise<CostAnalytics> {
    const { scope, filter } = this.#scope(query);
    const rows = this.#rows;
    const [totals, date, project, plan, agent, model, provider, bases, costliest, pullRequests] = await Promise.all([
      rows.totals(scope),
      rows.buckets(scope, 'day'),
      rows.buckets(scope, 'project'),
      rows.buckets(scope, 'plan'),
      rows.buckets(scope, 'agent'),
      rows.buckets(scope, 'model'),
      rows.buckets(scope, 'provider'),
      rows.buckets(scope, 'costBasis'),
      rows.costliestRuns(scope),
      rows.pullRequestLoops(scope),
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
      pullRequests,
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

  async #runAnalytics(scope: AnalyticsScope, filter: AnalyticsFilter): Promise<RunAnalytics> {
    // One statement: its fine groups and index walks replace nine scans (analytics-runs-sql.ts).
    const { totals, distributions: dists, groups, failureReasons: failures } = await this.#rows.runOverview(scope);
    const { day: days, agent, model, provider, project, steering } = groups;
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
          steered: outcomeSide(steering.find((row) => row.key === 'steered')),
          unsteered: outcomeSide(steering.find((row) => row.key === 'unsteered')),
        },
      },
    };
  }
}
