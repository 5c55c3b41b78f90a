import { Migration } from '@mikro-orm/migrations';

export class Migration20261125074421_run_paused_reason extends Migration {
  override name = 'Migration20261125074421_run_paused_reason';

  override up(): void | Promise<void> {
    this.addSql(`alter table "runs" add "paused_reason" text null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "runs" drop column "paused_reason";`);
  }
}
