import { Migration } from '@mikro-orm/migrations';

export class Migration20261202173429_one_time_secrets extends Migration {
  override name = 'Migration20261202173429_one_time_secrets';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "one_time_secrets" ("slot" varchar(96) not null, "secret_hash" varchar(64) not null, "bound_to" varchar(64) null, "expires_at" bigint not null, primary key ("slot"));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "one_time_secrets" cascade;`);
  }
}
