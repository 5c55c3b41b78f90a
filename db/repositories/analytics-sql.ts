// The SQL fragments the analytics queries share, per dialect. The two databases store a run's
// timestamps differently: `created_at` is epoch milliseconds (bigint) on both, but the datetime
// columns (started_at, ended_at, pr_merged_at) are epoch-ms integers on SQLite and timestamptz on
// PostgreSQL, so every duration and every day bucket is written once per dialect here.
import type { DbDialect } from '../orm.ts';

/** The runs an aggregate covers: created in [fromMs, toMs] (epoch ms, both ends included). */
export interface AnalyticsScope {
  fromMs: number;
  toMs: number;
  projectId?: string;
  /** Limits the runs to these projects (a spectator's visible ones); an empty set matches nothing. */
  onlyProjects?: Set<string>;
}

/** What a bucket groups runs by. */
export const RUN_GROUPINGS = ['day', 'agent', 'model', 'provider', 'project', 'plan', 'steering', 'costBasis'] as const;
export type RunGrouping = (typeof RUN_GROUPINGS)[number];

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
  }
}

/** The WHERE clause (on `runs r`) of a scope, with its parameters. */
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

/** A value from either driver (PostgreSQL answers bigint and numeric as strings) as a number. */
export function numberOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

export function numberOrZero(value: unknown): number {
  return numberOrNull(value) ?? 0;
}
