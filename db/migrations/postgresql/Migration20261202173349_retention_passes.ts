import { Migration } from '@mikro-orm/migrations';

export class Migration20261202173349_retention_passes extends Migration {
  override name = 'Migration20261202173349_retention_passes';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "retention_passes" ("data_dir_key" varchar(64) not null, "host" varchar(255) not null, "finished_at" timestamptz not null, "removed" jsonb not null, "reclaimed_bytes" jsonb not null, primary key ("data_dir_key"));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "retention_passes" cascade;`);
  }
}
