// The SQL fragments the analytics queries share, per dialect. The two databases store a run's
// timestamps differently: `created_at` is epoch milliseconds (bigint) on both, but the datetime
// columns (started_at, ended_at, pr_merged_at) are epoch-ms integers on SQLite and timestamptz on
// PostgreSQL, so every duration and every day bucket is written once per dialect here. Event
// payloads are JSON text on SQLite and jsonb on PostgreSQL: their members are read here too.
import type { RunState } from '../../core/run-states.ts';
import type { DbDialect } from '../orm.ts';

/** The measures whose distributions analytics reports. */
export const MEASURE_NAMES = ['durationMs', 'queueWaitMs', 'timeToMergeMs', 'costUsd'] as const;
export type MeasureName = (typeof MEASURE_NAMES)[number];

/** `{avg, median, p95, count}`; the statistics are null when count is 0. */
export interface DistributionRow {
  avg: number | null;
  median: number | null;
  p95: number | null;
  count: number;
}

/** The runs an aggregate covers: created in [fromMs, toMs] (epoch ms, both ends included). */
export interface AnalyticsScope {
  fromMs: number;
  toMs: number;
  projectId?: string;
  /** Limits the runs to these projects (a spectator's visible ones); an empty set matches nothing. */
  onlyProjects?: Set<string>;
  /** Only the newest this many runs of the window (by created_at, then id): a bounded scan. */
  newest?: number;
  /** Of those, only the runs in these states. */
  states?: readonly RunState[];
  /** Of those, only the runs that used more than this many tokens (all four kinds together). */
  overTokens?: number;
}

/** What a bucket groups runs by. */
export const RUN_GROUPINGS = [
  'day',
  'agent',
  'model',
  'provider',
  'project',
  'plan',
  'steering',
  'costBasis',
  'origin',
  'retryKind',
  'editing',
  'changeSize',
  'failureReason',
] as const;
export type RunGrouping = (typeof RUN_GROUPINGS)[number];

/**
 * Tools that write files, by lower-cased name: Claude Code's Edit, MultiEdit, Write and
 * NotebookEdit, OpenCode's edit, write and patch. Codex reports only shell commands, so its
 * edits are not seen.
 */
export const EDIT_TOOLS = ['edit', 'multiedit', 'write', 'notebookedit', 'patch'] as const;

/** The upper bounds (files changed) of the change sizes `small` and `medium`; above is `large`. */
export const CHANGE_SIZES = { small: 5, medium: 20 } as const;

/** A run's tokens of every kind, added up (a missing count is 0). */
export const RUN_TOKENS = `(coalesce(r.tokens_input, 0) + coalesce(r.tokens_output, 0)
  + coalesce(r.tokens_cache_read, 0) + coalesce(r.tokens_cache_write, 0))`;

/** A column holding a datetime, as epoch milliseconds. */
function epochMs(dialect: DbDialect, column: string): string {
  return dialect === 'sqlite' ? column : `(extract(epoch from ${column}) * 1000)`;
}

/** Milliseconds from one datetime column to another (null when either is). */
function spanMs(dialect: DbDialect, from: string, to: string): string {
  return dialect === 'sqlite' ? `(${to} - ${from})` : `(extract(epoch from (${to} - ${from})) * 1000)`;
}

/** The per-run measures of the distributions, each null where it does not apply. */
export function measures(dialect: DbDialect) {
  return {
    // Dispatch to a terminal state, for runs that started and ended.
    durationMs: spanMs(dialect, 'r.started_at', 'r.ended_at'),
    // Waiting in the queue: created (epoch ms on both dialects) to started.
    queueWaitMs: `(${epochMs(dialect, 'r.started_at')} - r.created_at)`,
    // From the run's end (the PR exists by then) to the merge: how long landed work waited for
    // review, without the agent's own time, which durationMs already shows.
    timeToMergeMs: spanMs(dialect, 'r.ended_at', 'r.pr_merged_at'),
    costUsd: 'r.cost_usd',
  };
}

export interface RankedMeasure {
  /** The per-run value, written exactly as its index's expression (a planner matches it by text). */
  value: string;
  /** When a run has the value: the index's WHERE, repeated so the partial index applies. */
  present: string;
  /** What the fine groups add up per run (see `mean`). */
  summed: string;
  /** The average over runs, from the sum of `summed` and the count. */
  mean: (sum: string, count: string) => string;
  /** The result columns' prefix. */
  column: string;
}

/**
 * The measures of measures() as GET /analytics/runs reads them: by rank up an index on each
 * (analytics-runs-sql.ts), and summed in its fine groups. PostgreSQL's values are the same numerics
 * (the queue wait against a constant epoch: extract(epoch from a timestamptz) is not immutable, so it
 * cannot be indexed). Their sums are not numeric, whose aggregate state
 * is large enough that PostgreSQL sorts the fine groups instead of hashing them: whole microseconds
 * as doubles, exact while a sum stays under 2^53 µs (285 years of run time), then the same numeric
 * division as avg() of the numeric values. SQLite's avg() over integers is also a double division
 * of the exact sum.
 */
export function rankedMeasures(dialect: DbDialect): Record<MeasureName, RankedMeasure> {
  const sqlite = dialect === 'sqlite';
  const micros = (interval: string) => `round(date_part('epoch', ${interval}) * 1000000)`;
  const time = (value: string, present: string, column: string, pgMicros: string): RankedMeasure => ({
    value,
    present,
    column,
    summed: sqlite ? value : pgMicros,
    mean: (sum, count) =>
      sqlite ? `(${sum}) * 1.0 / nullif(${count}, 0)` : `cast(${sum} as bigint) * 0.001000 / nullif(${count}, 0)`,
  });
  return {
    durationMs: time(
      spanMs(dialect, 'r.started_at', 'r.ended_at'),
      'r.started_at is not null and r.ended_at is not null',
      'duration',
      micros('r.ended_at - r.started_at'),
    ),
    queueWaitMs: time(
      sqlite
        ? '(r.started_at - r.created_at)'
        : `(extract(epoch from (r.started_at - timestamptz '1970-01-01 00:00:00+00')) * 1000 - r.created_at)`,
      'r.started_at is not null',
      'queue_wait',
      micros(`r.started_at - (timestamptz '1970-01-01 00:00:00+00' + r.created_at * interval '1 millisecond')`),
    ),
    timeToMergeMs: time(
      spanMs(dialect, 'r.ended_at', 'r.pr_merged_at'),
      'r.pr_merged_at is not null and r.ended_at is not null',
      'time_to_merge',
      micros('r.pr_merged_at - r.ended_at'),
    ),
    costUsd: {
      value: 'r.cost_usd',
      present: 'r.cost_usd is not null',
      column: 'cost',
      summed: 'r.cost_usd',
      // avg() over doubles is the sum over the count on both.
      mean: (sum, count) => `(${sum}) * 1.0 / nullif(${count}, 0)`,
    },
  };
}

/** A member of the payload of the run event `e` as text, e.g. ['input', 'file_path'] (null when absent). */
export function payloadText(dialect: DbDialect, path: string[]): string {
  return dialect === 'sqlite'
    ? `json_extract(e.payload, '$.${path.join('.')}')`
    : `(e.payload #>> '{${path.join(',')}}')`;
}

/** Whether the run event `e` is a call of a tool that writes files. */
export function isEditToolCall(dialect: DbDialect): string {
  const names = EDIT_TOOLS.map((name) => `'${name}'`).join(', ');
  return `(e.kind = 'tool_use' and lower(${payloadText(dialect, ['name'])}) in (${names}))`;
}

/** The file an edit tool call wrote: Claude Code's file_path or notebook_path, OpenCode's filePath. */
export function editedPath(dialect: DbDialect): string {
  const member = (name: string) => payloadText(dialect, ['input', name]);
  return `coalesce(${member('file_path')}, ${member('filePath')}, ${member('notebook_path')})`;
}

/** The expression a grouping buckets runs by (null where a run has no value). */
export function groupingKey(dialect: DbDialect, grouping: RunGrouping): string {
  switch (grouping) {
    case 'day':
      // The UTC calendar day of created_at (epoch ms).
      return dialect === 'sqlite'
        ? `strftime('%Y-%m-%d', r.created_at / 1000, 'unixepoch')`
        : `to_char(to_timestamp(r.created_at / 1000.0) at time zone 'UTC', 'YYYY-MM-DD')`;
    case 'agent':
      return 'r.agent_name';
    case 'model':
      return 'r.model';
    case 'provider':
      return 'r.provider';
    case 'project':
      return 'r.project_id';
    case 'plan':
      // The plan-run a run is a child of, through the indexed plan_run_children.run_id (min: one
      // key per run, even if a run were ever listed twice).
      return '(select min(c.plan_run_id) from plan_run_children c where c.run_id = r.id)';
    case 'steering':
      // Steered: at least one inbox message was addressed to the run (indexed by target_run_id).
      return `case when exists (select 1 from inbox_messages m where m.target_run_id = r.id)
        then 'steered' else 'unsteered' end`;
    case 'costBasis':
      return `case when r.cost_usd is null then 'unpriced' else r.cost_basis end`;
    case 'origin':
      // What dispatched the run; `manual-trigger` is the legacy spelling of `manual`.
      return `case when r.trigger = 'manual-trigger' then 'manual' else r.trigger end`;
    case 'retryKind':
      // A clone of an earlier run (continue, replicate), a plan-run child dispatched again after
      // a provider error (its child row counts retries), or a fresh dispatch.
      return `case when r.clone_kind is not null then r.clone_kind
        when exists (select 1 from plan_run_children c where c.run_id = r.id and c.retry_count > 0)
        then 'plan_retry' else 'fresh' end`;
    case 'editing':
      // Whether the agent called a file-writing tool (run_events by run_id and kind).
      return `case when exists (select 1 from run_events e where e.run_id = r.id and ${isEditToolCall(dialect)})
        then 'edited' else 'no_edits' end`;
    case 'changeSize':
      // Files changed on the pushed branch, measured by svc when it pushed.
      return `case when r.files_changed is null then 'unmeasured' when r.files_changed = 0 then 'none'
        when r.files_changed <= ${CHANGE_SIZES.small} then 'small'
        when r.files_changed <= ${CHANGE_SIZES.medium} then 'medium' else 'large' end`;
    case 'failureReason':
      return 'r.failure_reason';
  }
}

/** The WHERE clause (on `runs r`) of a scope's window and projects, with its parameters. */
export function scopeWhere(scope: AnalyticsScope): { sql: string; params: unknown[] } {
  const conditions = ['r.created_at >= ?', 'r.created_at <= ?'];
  const params: unknown[] = [scope.fromMs, scope.toMs];
  if (scope.projectId !== undefined) {
    conditions.push('r.project_id = ?');
    params.push(scope.projectId);
  }
  if (scope.onlyProjects) {
    const visible = [...scope.onlyProjects];
    if (visible.length === 0) conditions.push('1 = 0');
    else {
      conditions.push(`r.project_id in (${visible.map(() => '?').join(', ')})`);
      params.push(...visible);
    }
  }
  return { sql: conditions.join(' and '), params };
}

/**
 * The runs of a scope as a FROM clause with its WHERE (`runs r where …`), which a query may extend
 * with `and …`. With `newest`, `r` is the newest runs of the window only (created_at index, limit),
 * and the state and token filters apply to those.
 */
export function runsInScope(scope: AnalyticsScope): { sql: string; params: unknown[] } {
  const where = scopeWhere(scope);
  const filters: string[] = [];
  const filterParams: unknown[] = [];
  if (scope.states) {
    filters.push(scope.states.length ? `r.state in (${scope.states.map(() => '?').join(', ')})` : '1 = 0');
    filterParams.push(...scope.states);
  }
  if (scope.overTokens !== undefined) {
    filters.push(`${RUN_TOKENS} > ?`);
    filterParams.push(scope.overTokens);
  }
  if (scope.newest === undefined)
    return { sql: `runs r where ${[where.sql, ...filters].join(' and ')}`, params: [...where.params, ...filterParams] };
  return {
    sql: `(select * from runs r where ${where.sql} order by r.created_at desc, r.id desc limit ?) r
      where ${['1 = 1', ...filters].join(' and ')}`,
    params: [...where.params, scope.newest, ...filterParams],
  };
}

/** Runs one statement and answers its rows (the repository's connection). */
export type ExecuteSql = (sql: string, params: unknown[]) => Promise<Record<string, unknown>[]>;

/** A value from either driver (PostgreSQL answers bigint and numeric as strings) as a number. */
export function numberOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

export function numberOrZero(value: unknown): number {
  return numberOrNull(value) ?? 0;
}
