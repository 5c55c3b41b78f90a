import { Migration } from '@mikro-orm/migrations';

export class Migration20261202173349_retention_passes extends Migration {
  override name = 'Migration20261202173349_retention_passes';

  override up(): void | Promise<void> {
    this.addSql(
      `create table \`retention_passes\` (\`data_dir_key\` text not null primary key, \`host\` text not null, \`finished_at\` datetime not null, \`removed\` json not null, \`reclaimed_bytes\` json not null);`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`retention_passes\`;`);
  }
}
