import { Migration } from '@mikro-orm/migrations';

export class Migration20261123161113_runs_created_at extends Migration {
  override name = 'Migration20261123161113_runs_created_at';

  override up(): void | Promise<void> {
    this.addSql(`create index "runs_created_at_index" on "runs" ("created_at");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "runs_created_at_index";`);
  }
}
