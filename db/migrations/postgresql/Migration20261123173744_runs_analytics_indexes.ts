import { Migration } from '@mikro-orm/migrations';

// GET /analytics/runs (db/repositories/analytics-runs-sql.ts): a covering index of what it groups and
// sums, led by the UTC day, and one partial index per distribution measure, ordered by its numeric
// value (the queue wait against a constant epoch: extract(epoch from a timestamptz) is not immutable).
// The measures' own columns are included so that a walk up the index needs no heap row once vacuumed.
export class Migration20261123173744_runs_analytics_indexes extends Migration {
  override name = 'Migration20261123173744_runs_analytics_indexes';

  override up(): void | Promise<void> {
    this.addSql(`create index "runs_analytics_index" on "runs" (("created_at" / 86400000), "agent_name", "model",
      "provider", "project_id", "failure_reason", "state", "pr_state", "tokens_input", "tokens_output",
      "tokens_cache_read", "tokens_cache_write", "cost_usd", "started_at", "ended_at", "pr_merged_at", "created_at");`);
    this.addSql(`create index "runs_duration_ms_index" on "runs"
      ((extract(epoch from ("ended_at" - "started_at")) * 1000), "created_at", "project_id")
      include ("started_at", "ended_at") where "started_at" is not null and "ended_at" is not null;`);
    this.addSql(`create index "runs_queue_wait_ms_index" on "runs"
      ((extract(epoch from ("started_at" - timestamptz '1970-01-01 00:00:00+00')) * 1000 - "created_at"),
      "created_at", "project_id") include ("started_at") where "started_at" is not null;`);
    this.addSql(`create index "runs_time_to_merge_ms_index" on "runs"
      ((extract(epoch from ("pr_merged_at" - "ended_at")) * 1000), "created_at", "project_id")
      include ("ended_at", "pr_merged_at") where "pr_merged_at" is not null and "ended_at" is not null;`);
    this.addSql(`create index "runs_cost_usd_index" on "runs" ("cost_usd", "created_at", "project_id")
      where "cost_usd" is not null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "runs_analytics_index";`);
    this.addSql(`drop index "runs_duration_ms_index";`);
    this.addSql(`drop index "runs_queue_wait_ms_index";`);
    this.addSql(`drop index "runs_time_to_merge_ms_index";`);
    this.addSql(`drop index "runs_cost_usd_index";`);
  }
}
