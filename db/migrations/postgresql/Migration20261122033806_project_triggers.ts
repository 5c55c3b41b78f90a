import { Migration } from '@mikro-orm/migrations';

export class Migration20261122033806_project_triggers extends Migration {
  override name = 'Migration20261122033806_project_triggers';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "project_triggers" ("project_id" varchar(32) not null, "trigger_id" varchar(128) not null, "schedule_id" varchar(255) not null, "cron" varchar(128) not null, "timezone" varchar(64) null, "last_fired_at" timestamptz null, "last_run_id" varchar(32) null, "schedule_error" text null, "synced_at" timestamptz not null, primary key ("project_id", "trigger_id"));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "project_triggers" cascade;`);
  }
}
