// The dispatch-context reads of GET /analytics/dispatch that are not buckets of runs: how runs
// were dispatched (plan-run children, seeds, cost caps) and the queue as it is now.
import { numberOrNull, numberOrZero, runsInScope, type AnalyticsScope, type ExecuteSql } from './analytics-sql.ts';

/** What a window's runs were dispatched with. */
export interface DispatchContextRow {
  runs: number;
  /** Runs a plan-run dispatched as one of its children. */
  planChildren: number;
  /** Runs linked to a seed (an issue of the project's tracker). */
  seeded: number;
  /** Runs dispatched with a cost cap. */
  costCapped: number;
}

/** The queue now, whatever the window: queued and running runs, and when the oldest queued one was created. */
export interface QueueNowRow {
  queued: number;
  running: number;
  /** Epoch ms; null when nothing is queued. */
  oldestQueuedAt: number | null;
}

export class DispatchQueries {
  readonly #execute: ExecuteSql;

  constructor(execute: ExecuteSql) {
    this.#execute = execute;
  }

  async context(scope: AnalyticsScope): Promise<DispatchContextRow> {
    const runs = runsInScope(scope);
    const [row = {}] = await this.#execute(
      `select count(*) as runs,
        sum(case when exists (select 1 from plan_run_children c where c.run_id = r.id) then 1 else 0 end)
          as plan_children,
        sum(case when r.seed_id is not null then 1 else 0 end) as seeded,
        sum(case when r.max_cost_usd is not null then 1 else 0 end) as cost_capped
      from ${runs.sql}`,
      runs.params,
    );
    return {
      runs: numberOrZero(row.runs),
      planChildren: numberOrZero(row.plan_children),
      seeded: numberOrZero(row.seeded),
      costCapped: numberOrZero(row.cost_capped),
    };
  }

  /** The non-terminal runs now (the state index), of one project when given. */
  async queueNow(projectId: string | null): Promise<QueueNowRow> {
    const [row = {}] = await this.#execute(
      `select sum(case when r.state = 'queued' then 1 else 0 end) as queued,
        sum(case when r.state = 'running' then 1 else 0 end) as running,
        min(case when r.state = 'queued' then r.created_at end) as oldest_queued_at
      from runs r
      where r.state in ('queued', 'running')${projectId === null ? '' : ' and r.project_id = ?'}`,
      projectId === null ? [] : [projectId],
    );
    return {
      queued: numberOrZero(row.queued),
      running: numberOrZero(row.running),
      oldestQueuedAt: numberOrNull(row.oldest_queued_at),
    };
  }
}
