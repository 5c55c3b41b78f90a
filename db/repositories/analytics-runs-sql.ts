// GET /analytics/runs in one statement per dialect. Over 100k runs, one aggregate per grouping and
// the distributions by window functions cost a scan and a sort each: 1.6–2 s. Here one pass over the
// window aggregates its runs into fine groups (day × agent × model × provider × project × failure
// reason); every grouping and the totals add those groups up, and each median or p95 is the run at
// its rank, reached by walking an index on its measure. Counts and integer sums are exact whichever
// way they are added, so the numbers are those of the per-grouping queries; USD sums are doubles
// added in another order (the same when costs are exact in binary, within an ulp otherwise).
import type { DbDialect } from '../orm.ts';
import {
  MEASURE_NAMES,
  type DistributionRow,
  type MeasureName,
  numberOrNull,
  numberOrZero,
  rankedMeasures,
  scopeWhere,
  type AnalyticsScope,
  type RankedMeasure,
} from './analytics-sql.ts';

/** The window and projects of GET /analytics/runs (no `newest` cap, no state or token filter). */
export type RunWindowScope = Pick<AnalyticsScope, 'fromMs' | 'toMs' | 'projectId' | 'onlyProjects'>;

/** The aggregates of one bucket of runs, as GET /analytics/runs uses them. */
export interface RunOutcomeRow {
  /** The bucket's key; null for runs without a value (no model, no project…). */
  key: string | null;
  runs: number;
  succeeded: number;
  failed: number;
  cancelled: number;
  /** Queued or running. */
  active: number;
  /** Runs whose PR state is known (open, merged or closed unmerged). */
  prStateKnown: number;
  prsMerged: number;
  tokens: { input: number; output: number; cacheRead: number; cacheWrite: number };
  /** Runs with a cost. */
  priced: number;
  /** The sum of the priced runs' costs (0 when none is priced). */
  costUsd: number;
  avgDurationMs: number | null;
}

export const RUN_OUTCOME_GROUPINGS = ['day', 'agent', 'model', 'provider', 'project', 'steering'] as const;
export type RunOutcomeGrouping = (typeof RUN_OUTCOME_GROUPINGS)[number];

export interface RunOverviewRows {
  totals: RunOutcomeRow;
  distributions: Record<MeasureName, DistributionRow>;
  groups: Record<RunOutcomeGrouping, RunOutcomeRow[]>;
  /** Failed runs per failure reason (null: failed without a recorded reason). */
  failureReasons: { key: string | null; runs: number }[];
}

/** A UTC day as an integer: created_at (epoch ms) / DAY_MS, the leading column of the covering index. */
const DAY_MS = 86_400_000;

/**
 * The indexes the statement reads (migration Migration20261123173744_runs_analytics_indexes, declared
 * on the entity). `outcomes` covers every column the fine groups read, in their grouping order, so
 * SQLite groups without sorting and never reads the table; each measure's index holds the runs that
 * have the measure, ordered by it, with created_at and project_id to apply the window on the way.
 */
export const RUN_ANALYTICS_INDEXES = {
  outcomes: 'runs_analytics_index',
  durationMs: 'runs_duration_ms_index',
  queueWaitMs: 'runs_queue_wait_ms_index',
  timeToMergeMs: 'runs_time_to_merge_ms_index',
  costUsd: 'runs_cost_usd_index',
} as const;

/** The bucket columns, and how a grouping adds them up from the fine groups. */
const SUMMED = [
  'runs',
  'succeeded',
  'failed',
  'cancelled',
  'active',
  'pr_state_known',
  'prs_merged',
  'tokens_input',
  'tokens_output',
  'tokens_cache_read',
  'tokens_cache_write',
  'priced',
  'cost_usd',
];
/** What the steering comparison counts, as the fine groups and the steered runs count it. */
const STEERING = ['runs', 'succeeded', 'failed', 'cancelled', 'pr_state_known', 'prs_merged'];
const list = <T>(items: readonly T[], item: (value: T) => string) => items.map(item).join(',\n      ');
const OUTCOME_COUNTS = `count(*) as runs,
      count(*) filter (where r.state = 'succeeded') as succeeded,
      count(*) filter (where r.state = 'failed') as failed,
      count(*) filter (where r.state = 'cancelled') as cancelled,
      count(r.pr_state) as pr_state_known,
      count(*) filter (where r.pr_state = 'merged') as prs_merged`;

/** The statement, with its parameters in order. */
export function runOverviewQuery(dialect: DbDialect, scope: RunWindowScope): { sql: string; params: unknown[] } {
  const sqlite = dialect === 'sqlite';
  const where = scopeWhere(scope);
  // Parameters are collected as the text is built, which is in the order the statement reads them.
  const params: unknown[] = [];
  const inScope = () => {
    params.push(...where.params);
    return where.sql;
  };
  const indexed = (name: string) => (sqlite ? `indexed by ${name}` : '');
  const measures = rankedMeasures(dialect);
  const present = (m: RankedMeasure) => `count(*) filter (where ${m.present})`;
  const measured = MEASURE_NAMES.filter((name) => name !== 'costUsd').map((name) => measures[name]);

  params.push(Math.trunc(scope.fromMs / DAY_MS), Math.trunc(scope.toMs / DAY_MS));
  const fine = `select r.created_at / ${DAY_MS} as day, r.agent_name as agent, r.model as model,
      r.provider as provider, r.project_id as project, r.failure_reason as reason,
      ${OUTCOME_COUNTS},
      count(*) filter (where r.state in ('queued', 'running')) as active,
      sum(r.tokens_input) as tokens_input, sum(r.tokens_output) as tokens_output,
      sum(r.tokens_cache_read) as tokens_cache_read, sum(r.tokens_cache_write) as tokens_cache_write,
      count(r.cost_usd) as priced, sum(r.cost_usd) as cost_usd,
      ${list(measured, (m) => `sum(${m.summed}) as ${m.column}_sum, ${present(m)} as ${m.column}_n`)}
    from runs r ${indexed(RUN_ANALYTICS_INDEXES.outcomes)}
    where r.created_at / ${DAY_MS} >= ? and r.created_at / ${DAY_MS} <= ? and ${inScope()}
    group by r.created_at / ${DAY_MS}, r.agent_name, r.model, r.provider, r.project_id, r.failure_reason`;
  // The fine groups without their day: the groupings other than the day add these few rows up, so
  // only two group-bys (day, dims) read the fine groups (each one a sort on SQLite).
  const sums = [...SUMMED, ...measured.flatMap((m) => [`${m.column}_sum`, `${m.column}_n`])];
  const dims = `select agent, model, provider, project, reason, ${list(sums, (column) => `sum(${column}) as ${column}`)}
    from fine group by agent, model, provider, project, reason`;
  // Counts as integers: the ranks are integer arithmetic, and PostgreSQL's sum() of a count is numeric.
  const count = (column: string) => `cast(coalesce(sum(${column}), 0) as bigint)`;
  const totals = `select ${list(SUMMED, (column) => `sum(${column}) as ${column}`)},
      ${list(measured, (m) => `sum(${m.column}_sum) as ${m.column}_sum, ${count(`${m.column}_n`)} as ${m.column}_n`)},
      ${count('priced')} as cost_n
    from dims`;
  // Steered runs: those an inbox message was addressed to, found from the messages (few) rather than
  // by a lookup per run of the window; the unsteered side is the totals minus them (counts: exact).
  const steered = `select ${OUTCOME_COUNTS}
    from (select distinct m.target_run_id as id from inbox_messages m) s cross join runs r
    where r.id = s.id and ${inScope()}`;

  // The value at rank k = ceil(n·p/100) of a measure (nearest rank, nulls excluded): the median
  // walks k rows up its index, the p95 walks n − k rows down it. (n·p + 99) / 100 is integer
  // arithmetic on both dialects.
  const ranked = (name: MeasureName, percent: number) => {
    const m = measures[name];
    const n = `${m.column}_n`;
    const offset =
      percent === 50
        ? `case when ${n} = 0 then 0 else (${n} * 50 + 99) / 100 - 1 end`
        : `case when ${n} = 0 then 0 else ${n} - (${n} * ${percent} + 99) / 100 end`;
    return `(select ${m.value} from runs r ${indexed(RUN_ANALYTICS_INDEXES[name])}
      where ${m.present} and ${inScope()}
      order by ${m.value} ${percent === 50 ? 'asc' : 'desc'} limit 1 offset (select ${offset} from totals))`;
  };
  const distributionColumns = MEASURE_NAMES.flatMap((name) => {
    const { column } = measures[name];
    return [`${column}_n`, `${column}_avg`, `${column}_median`, `${column}_p95`];
  });
  const distributions = MEASURE_NAMES.flatMap((name) => {
    const { column } = measures[name];
    const sum = name === 'costUsd' ? 't.cost_usd' : `t.${column}_sum`;
    return [
      `t.${column}_n as ${column}_n`,
      `${measures[name].mean(sum, `t.${column}_n`)} as ${column}_avg`,
      `${ranked(name, 50)} as ${column}_median`,
      `${ranked(name, 95)} as ${column}_p95`,
    ];
  });
  const noDistributions = distributionColumns.map((column) => `null as ${column}`).join(', ');
  const bucketColumns = [
    ...SUMMED.map((column) => `sum(${column}) as ${column}`),
    `${measures.durationMs.mean('sum(duration_sum)', 'sum(duration_n)')} as avg_duration_ms`,
  ].join(', ');
  const dayKey = sqlite
    ? `strftime('%Y-%m-%d', day * 86400, 'unixepoch')`
    : `to_char(to_timestamp(day * 86400) at time zone 'UTC', 'YYYY-MM-DD')`;
  const rollup = (grouping: RunOutcomeGrouping, from: 'fine' | 'dims', column: string, key = column) =>
    `select '${grouping}', ${key}, ${bucketColumns}, ${noDistributions} from ${from} group by ${column}`;
  const steering = (key: string, column: (name: string) => string, from: string) =>
    `select 'steering', '${key}', ${[...SUMMED, 'avg_duration_ms']
      .map((name) => (STEERING.includes(name) ? column(name) : 'null'))
      .join(', ')}, ${noDistributions} from ${from}`;
  const failureColumns = [...SUMMED, 'avg_duration_ms']
    .map((name) => (name === 'failed' ? 'sum(failed)' : 'null'))
    .join(', ');

  const sql = `with fine as materialized (${fine}),
  dims as materialized (${dims}),
  totals as materialized (${totals}),
  steered as materialized (${steered})
  select 'total' as grouping, null as bucket, ${SUMMED.map((column) => `t.${column}`).join(', ')},
    ${measures.durationMs.mean('t.duration_sum', 't.duration_n')} as avg_duration_ms,
    ${distributions.join(',\n    ')}
  from totals t
  union all ${rollup('day', 'fine', 'day', dayKey)}
  union all ${rollup('agent', 'dims', 'agent')}
  union all ${rollup('model', 'dims', 'model')}
  union all ${rollup('provider', 'dims', 'provider')}
  union all ${rollup('project', 'dims', 'project')}
  union all select 'failureReason', reason, ${failureColumns}, ${noDistributions}
    from dims group by reason having sum(failed) > 0
  union all ${steering('steered', (name) => `s.${name}`, 'steered s')}
  union all ${steering('unsteered', (name) => `t.${name} - s.${name}`, 'totals t cross join steered s')}`;
  return { sql, params };
}

/** One bucket's outcome columns (as every run-bucket query names them), shaped. */
export function outcomeRow(row: Record<string, unknown>): RunOutcomeRow {
  return {
    key: row.bucket === null || row.bucket === undefined ? null : String(row.bucket),
    runs: numberOrZero(row.runs),
    succeeded: numberOrZero(row.succeeded),
    failed: numberOrZero(row.failed),
    cancelled: numberOrZero(row.cancelled),
    active: numberOrZero(row.active),
    prStateKnown: numberOrZero(row.pr_state_known),
    prsMerged: numberOrZero(row.prs_merged),
    tokens: {
      input: numberOrZero(row.tokens_input),
      output: numberOrZero(row.tokens_output),
      cacheRead: numberOrZero(row.tokens_cache_read),
      cacheWrite: numberOrZero(row.tokens_cache_write),
    },
    priced: numberOrZero(row.priced),
    costUsd: numberOrZero(row.cost_usd),
    avgDurationMs: numberOrNull(row.avg_duration_ms),
  };
}

/** The statement's rows, one per bucket (the `total` row also carries the distributions), shaped. */
export function parseRunOverview(dialect: DbDialect, rows: Record<string, unknown>[]): RunOverviewRows {
  const total = rows.find((row) => row.grouping === 'total') ?? {};
  const measures = rankedMeasures(dialect);
  const distribution = (name: MeasureName): DistributionRow => {
    const { column } = measures[name];
    return {
      avg: numberOrNull(total[`${column}_avg`]),
      median: numberOrNull(total[`${column}_median`]),
      p95: numberOrNull(total[`${column}_p95`]),
      count: numberOrZero(total[`${column}_n`]),
    };
  };
  const of = (grouping: string) => rows.filter((row) => row.grouping === grouping);
  return {
    totals: outcomeRow({ ...total, bucket: null }),
    distributions: Object.fromEntries(MEASURE_NAMES.map((name) => [name, distribution(name)])) as Record<
      MeasureName,
      DistributionRow
    >,
    groups: Object.fromEntries(
      RUN_OUTCOME_GROUPINGS.map((grouping) => [grouping, of(grouping).map(outcomeRow)]),
    ) as Record<RunOutcomeGrouping, RunOutcomeRow[]>,
    failureReasons: of('failureReason').map((row) => ({
      key: row.bucket === null || row.bucket === undefined ? null : String(row.bucket),
      runs: numberOrZero(row.failed),
    })),
  };
}
