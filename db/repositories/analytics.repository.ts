// The analytics reads of the run projection, aggregated in SQL on either dialect: buckets of runs
// (per day, agent, model, provider, project, plan, steering, cost basis, origin, retry kind…),
// distributions with their percentiles, failure reasons, the costliest runs, and the queries of
// dispatch and behavior analytics (their own files). No query returns a row per run, except the
// costliest runs, which are capped.
import type { ReadModel } from '../orm.ts';
import { BehaviorQueries } from './analytics-behavior-sql.ts';
import { DispatchQueries } from './analytics-dispatch-sql.ts';
import {
  outcomeRow,
  parseRunOverview,
  type RunOutcomeRow,
  runOverviewQuery,
  type RunOverviewRows,
  type RunWindowScope,
} from './analytics-runs-sql.ts';
import {
  groupingKey,
  MEASURE_NAMES,
  measures,
  numberOrNull,
  numberOrZero,
  runsInScope,
  type AnalyticsScope,
  type DistributionRow,
  type MeasureName,
  type RunGrouping,
} from './analytics-sql.ts';

export type { AnalyticsScope, DistributionRow, MeasureName, RunGrouping } from './analytics-sql.ts';
export type { RunOutcomeRow, RunOverviewRows, RunWindowScope } from './analytics-runs-sql.ts';

/** The aggregates of one bucket of runs: the outcome columns, and the dispatch and change ones. */
export interface RunBucketRow extends RunOutcomeRow {
  /** Created to started, over the runs that started. */
  avgQueueWaitMs: number | null;
  /** What svc measured on the pushed branches (`measured`: runs with a measurement). */
  changes: { measured: number; filesChanged: number; insertions: number; deletions: number };
}

/** How many runs the costliest-runs breakdown lists at most. */
export const TOP_RUNS_LIMIT = 50;

/**
 * The analytics queries: each answers aggregates over the runs of a scope (a created_at window,
 * optionally one project or a spectator's visible projects), in SQL on SQLite and PostgreSQL.
 */
export class AnalyticsRepository {
  readonly #readModel: ReadModel;
  /** The dispatch-context queries of GET /analytics/dispatch. */
  readonly dispatch: DispatchQueries;
  /** The event-mining queries of GET /analytics/behavior. */
  readonly behavior: BehaviorQueries;

  constructor(readModel: ReadModel) {
    this.#readModel = readModel;
    const execute = (sql: string, params: unknown[]) => this.#execute(sql, params);
    this.dispatch = new DispatchQueries(execute);
    // The dialect is read when a query runs: the OpenAPI document builds routes without a database.
    this.behavior = new BehaviorQueries(() => this.#readModel.dialect, execute);
  }

  #execute(sql: string, params: unknown[]): Promise<Record<string, unknown>[]> {
    return this.#readModel.em().getConnection().execute(sql, params, 'all');
  }

  /** How many runs the scope covers (its window, before any `newest` cap). */
  async countRuns(scope: AnalyticsScope): Promise<number> {
    const { newest: _cap, ...window } = scope;
    const runs = runsInScope(window);
    const [row] = await this.#execute(`select count(*) as runs from ${runs.sql}`, runs.params);
    return numberOrZero(row?.runs);
  }

  /**
   * Everything GET /analytics/runs shows (totals, distributions, the buckets per day, agent, model,
   * provider, project and steering, failure reasons) in one statement: analytics-runs-sql.ts.
   */
  async runOverview(scope: RunWindowScope): Promise<RunOverviewRows> {
    const { dialect } = this.#readModel;
    const { sql, params } = runOverviewQuery(dialect, scope);
    return parseRunOverview(dialect, await this.#execute(sql, params));
  }

  /** The aggregates of every run in scope: one bucket, with a null key (zeros when there is no run). */
  async totals(scope: AnalyticsScope): Promise<RunBucketRow> {
    return (await this.#buckets(scope, null))[0]!;
  }

  /** One bucket per value of the grouping, in no particular order (the service sorts). */
  buckets(scope: AnalyticsScope, grouping: RunGrouping): Promise<RunBucketRow[]> {
    return this.#buckets(scope, grouping);
  }

  async #buckets(scope: AnalyticsScope, grouping: RunGrouping | null): Promise<RunBucketRow[]> {
    const { dialect } = this.#readModel;
    const runs = runsInScope(scope);
    const key = grouping === null ? 'null' : groupingKey(dialect, grouping);
    const measure = measures(dialect);
    const rows = await this.#execute(
      `select ${key} as bucket,
        count(*) as runs,
        sum(case when r.state = 'succeeded' then 1 else 0 end) as succeeded,
        sum(case when r.state = 'failed' then 1 else 0 end) as failed,
        sum(case when r.state = 'cancelled' then 1 else 0 end) as cancelled,
        sum(case when r.state in ('queued', 'running') then 1 else 0 end) as active,
        sum(case when r.pr_state is not null then 1 else 0 end) as pr_state_known,
        sum(case when r.pr_state = 'merged' then 1 else 0 end) as prs_merged,
        sum(r.tokens_input) as tokens_input,
        sum(r.tokens_output) as tokens_output,
        sum(r.tokens_cache_read) as tokens_cache_read,
        sum(r.tokens_cache_write) as tokens_cache_write,
        count(r.cost_usd) as priced,
        sum(r.cost_usd) as cost_usd,
        avg(${measure.durationMs}) as avg_duration_ms,
        avg(${measure.queueWaitMs}) as avg_queue_wait_ms,
        count(r.files_changed) as measured,
        sum(r.files_changed) as files_changed,
        sum(r.insertions) as insertions,
        sum(r.deletions) as deletions
      from ${runs.sql}
      ${grouping === null ? '' : 'group by bucket'}`,
      runs.params,
    );
    return rows.map((row) => ({
      ...outcomeRow(row),
      avgQueueWaitMs: numberOrNull(row.avg_queue_wait_ms),
      changes: {
        measured: numberOrZero(row.measured),
        filesChanged: numberOrZero(row.files_changed),
        insertions: numberOrZero(row.insertions),
        deletions: numberOrZero(row.deletions),
      },
    }));
  }

  /**
   * The distributions of the per-run measures, in one pass: each measure is ranked by a window
   * function (its nulls last), so the median and p95 are read by rank in SQL and no value leaves
   * the database. Percentiles are nearest-rank: the value at rank ceil(p·n), i.e. a value some
   * run really has (the median of an even count is the lower middle one).
   */
  async distributions<Name extends MeasureName = MeasureName>(
    scope: AnalyticsScope,
    names: readonly Name[] = MEASURE_NAMES as readonly MeasureName[] as readonly Name[],
  ): Promise<Record<Name, DistributionRow>> {
    const { dialect } = this.#readModel;
    const runs = runsInScope(scope);
    const expressions = measures(dialect);
    const column = (name: MeasureName) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
    const measured = names.map((name) => `${expressions[name]} as ${column(name)}`).join(',\n        ');
    const ranked = names
      .map((name) => {
        const value = column(name);
        return `${value},
        row_number() over (order by case when ${value} is null then 1 else 0 end, ${value}) as ${value}_rank,
        count(${value}) over () as ${value}_count`;
      })
      .join(',\n      ');
    // Integer arithmetic on both dialects: (n·p + 99) / 100 is ceil(n·p/100).
    const statistics = names
      .map((name) => {
        const value = column(name);
        return `count(${value}) as ${value}_n,
      avg(${value}) as ${value}_avg,
      max(case when ${value}_rank = (${value}_count * 50 + 99) / 100 then ${value} end) as ${value}_median,
      max(case when ${value}_rank = (${value}_count * 95 + 99) / 100 then ${value} end) as ${value}_p95`;
      })
      .join(',\n      ');
    const [row = {}] = await this.#execute(
      `select ${statistics}
      from (
        select ${ranked}
        from (select ${measured} from ${runs.sql}) measured
      ) ranked`,
      runs.params,
    );
    const distributionOf = (name: MeasureName): DistributionRow => {
      const value = column(name);
      return {
        avg: numberOrNull(row[`${value}_avg`]),
        median: numberOrNull(row[`${value}_median`]),
        p95: numberOrNull(row[`${value}_p95`]),
        count: numberOrZero(row[`${value}_n`]),
      };
    };
    return Object.fromEntries(names.map((name) => [name, distributionOf(name)])) as Record<Name, DistributionRow>;
  }

  /** Failed runs per failure reason (null: failed without a recorded reason). */
  async failureReasons(scope: AnalyticsScope): Promise<{ key: string | null; runs: number }[]> {
    const runs = runsInScope(scope);
    const rows = await this.#execute(
      `select r.failure_reason as bucket, count(*) as runs
      from ${runs.sql} and r.state = 'failed'
      group by r.failure_reason`,
      runs.params,
    );
    return rows.map((row) => ({ key: (row.bucket as string | null) ?? null, runs: numberOrZero(row.runs) }));
  }

  /** The priced runs with the highest cost, at most `limit` of them (ties by id). */
  async costliestRuns(scope: AnalyticsScope, limit = TOP_RUNS_LIMIT): Promise<{ id: string; costUsd: number }[]> {
    const runs = runsInScope(scope);
    const rows = await this.#execute(
      `select r.id, r.cost_usd
      from ${runs.sql} and r.cost_usd is not null
      order by r.cost_usd desc, r.id asc
      limit ?`,
      [...runs.params, limit],
    );
    return rows.map((row) => ({ id: String(row.id), costUsd: numberOrZero(row.cost_usd) }));
  }

  /**
   * The PRs svc answered with follow-up rounds (docs/pr-loop.md), by the run that opened them: how
   * many, their rounds, their total cost (the run's and its rounds'), and the costliest of them.
   */
  async pullRequestLoops(scope: AnalyticsScope, limit = TOP_RUNS_LIMIT) {
    const runs = runsInScope(scope);
    const [totals] = await this.#execute(
      `select count(*) as prs, sum(r.pr_rounds) as rounds, sum(r.pr_cost_usd) as cost_usd
      from ${runs.sql} and r.pr_rounds is not null`,
      runs.params,
    );
    const costliest = await this.#execute(
      `select r.id, r.pr_cost_usd, r.pr_rounds
      from ${runs.sql} and r.pr_rounds is not null
      order by coalesce(r.pr_cost_usd, 0) desc, r.id asc
      limit ?`,
      [...runs.params, limit],
    );
    return {
      prs: numberOrZero(totals?.prs),
      rounds: numberOrZero(totals?.rounds),
      costUsd: numberOrZero(totals?.cost_usd),
      costliest: costliest.map((row) => ({
        key: String(row.id),
        costUsd: numberOrZero(row.pr_cost_usd),
        rounds: numberOrZero(row.pr_rounds),
      })),
    };
  }
}
