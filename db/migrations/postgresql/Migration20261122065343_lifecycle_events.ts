import { Migration } from '@mikro-orm/migrations';

export class Migration20261122065343_lifecycle_events extends Migration {
  override name = 'Migration20261122065343_lifecycle_events';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "lifecycle_events" ("id" serial primary key, "run_id" varchar(32) not null, "hook" varchar(32) not null, "state" varchar(16) null, "ts" timestamptz not null);`,
    );
    this.addSql(
      `alter table "lifecycle_events" add constraint "lifecycle_events_run_id_hook_unique" unique ("run_id", "hook");`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "lifecycle_events" cascade;`);
  }
}
