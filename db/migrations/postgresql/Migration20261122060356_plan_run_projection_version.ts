import { Migration } from '@mikro-orm/migrations';

export class Migration20261122060356_plan_run_projection_version extends Migration {
  override name = 'Migration20261122060356_plan_run_projection_version';

  override up(): void | Promise<void> {
    this.addSql(`alter table "plan_runs" add "projection_version" int not null default 0;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "plan_runs" drop column "projection_version";`);
  }
}
