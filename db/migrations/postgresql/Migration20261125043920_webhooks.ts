import { Migration } from '@mikro-orm/migrations';

export class Migration20261125043920_webhooks extends Migration {
  override name = 'Migration20261125043920_webhooks';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "webhooks" ("id" varchar(64) not null, "url" text not null, "hooks" jsonb null, "description" text null, "source" varchar(16) not null, "created_at" timestamptz not null, primary key ("id"));`,
    );

    this.addSql(
      `create table "webhook_deliveries" ("id" varchar(128) not null, "webhook_id" varchar(64) not null, "event_id" int not null, "hook" varchar(32) not null, "run_id" varchar(32) not null, "state" varchar(16) not null, "attempts" int not null default 0, "last_status_code" int null, "last_error" text null, "last_attempt_at" timestamptz null, "next_attempt_at" timestamptz null, "delivered_at" timestamptz null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(
      `create index "webhook_deliveries_webhook_id_event_id_index" on "webhook_deliveries" ("webhook_id", "event_id");`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "webhooks" cascade;`);
    this.addSql(`drop table if exists "webhook_deliveries" cascade;`);
  }
}
