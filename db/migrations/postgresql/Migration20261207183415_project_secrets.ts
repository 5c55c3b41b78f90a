import { Migration } from '@mikro-orm/migrations';

export class Migration20261207183415_project_secrets extends Migration {
  override name = 'Migration20261207183415_project_secrets';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "project_secrets" ("project_id" varchar(32) not null, "name" varchar(128) not null, "scope" varchar(8) not null, "sealed" text not null, "key_id" varchar(16) not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("project_id", "name"));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "project_secrets" cascade;`);
  }
}
