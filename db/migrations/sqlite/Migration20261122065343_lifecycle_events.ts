import { Migration } from '@mikro-orm/migrations';

export class Migration20261122065343_lifecycle_events extends Migration {
  override name = 'Migration20261122065343_lifecycle_events';

  override up(): void | Promise<void> {
    this.addSql(
      `create table \`lifecycle_events\` (\`id\` integer not null primary key autoincrement, \`run_id\` text not null, \`hook\` text not null, \`state\` text null, \`ts\` datetime not null);`,
    );
    this.addSql(
      `create unique index \`lifecycle_events_run_id_hook_unique\` on \`lifecycle_events\` (\`run_id\`, \`hook\`);`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`lifecycle_events\`;`);
  }
}
