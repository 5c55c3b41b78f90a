import { Migration } from '@mikro-orm/migrations';

export class Migration20261202173429_one_time_secrets extends Migration {
  override name = 'Migration20261202173429_one_time_secrets';

  override up(): void | Promise<void> {
    this.addSql(
      `create table \`one_time_secrets\` (\`slot\` text not null primary key, \`secret_hash\` text not null, \`bound_to\` text null, \`expires_at\` bigint not null);`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`one_time_secrets\`;`);
  }
}
