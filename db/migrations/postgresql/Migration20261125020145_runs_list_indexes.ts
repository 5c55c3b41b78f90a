import { Migration } from '@mikro-orm/migrations';

export class Migration20261125020145_runs_list_indexes extends Migration {
  override name = 'Migration20261125020145_runs_list_indexes';

  override up(): void | Promise<void> {
    this.addSql(`drop index "runs_state_index";`);
    this.addSql(`create index "runs_state_created_at_index" on "runs" ("state", "created_at");`);
    this.addSql(`create index "runs_cost_usd_created_at_index" on "runs" ("cost_usd", "created_at");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "runs_state_created_at_index";`);
    this.addSql(`drop index "runs_cost_usd_created_at_index";`);
    this.addSql(`create index "runs_state_index" on "runs" ("state");`);
  }
}
