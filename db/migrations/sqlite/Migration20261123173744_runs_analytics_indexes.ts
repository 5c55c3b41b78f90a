import { Migration } from '@mikro-orm/migrations';

// GET /analytics/runs (db/repositories/analytics-runs-sql.ts): a covering index of what it groups and
// sums, led by the UTC day, and one partial index per distribution measure, ordered by it.
export class Migration20261123173744_runs_analytics_indexes extends Migration {
  override name = 'Migration20261123173744_runs_analytics_indexes';

  override up(): void | Promise<void> {
    this.addSql(`create index "runs_analytics_index" on "runs" (("created_at" / 86400000), "agent_name", "model",
      "provider", "project_id", "failure_reason", "state", "pr_state", "tokens_input", "tokens_output",
      "tokens_cache_read", "tokens_cache_write", "cost_usd", "started_at", "ended_at", "pr_merged_at", "created_at");`);
    this
      .addSql(`create index "runs_duration_ms_index" on "runs" (("ended_at" - "started_at"), "created_at", "project_id")
      where "started_at" is not null and "ended_at" is not null;`);
    this.addSql(`create index "runs_queue_wait_ms_index" on "runs" (("started_at" - "created_at"), "created_at",
      "project_id") where "started_at" is not null;`);
    this.addSql(`create index "runs_time_to_merge_ms_index" on "runs" (("pr_merged_at" - "ended_at"), "created_at",
      "project_id") where "pr_merged_at" is not null and "ended_at" is not null;`);
    this.addSql(`create index "runs_cost_usd_index" on "runs" ("cost_usd", "created_at", "project_id")
      where "cost_usd" is not null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index \`runs_analytics_index\`;`);
    this.addSql(`drop index \`runs_duration_ms_index\`;`);
    this.addSql(`drop index \`runs_queue_wait_ms_index\`;`);
    this.addSql(`drop index \`runs_time_to_merge_ms_index\`;`);
    this.addSql(`drop index \`runs_cost_usd_index\`;`);
  }
}
