import { Migration } from '@mikro-orm/migrations';

export class Migration20261122035642_inbox_seq_per_run extends Migration {
  override name = 'Migration20261122035642_inbox_seq_per_run';

  override up(): void | Promise<void> {
    this.addSql(`drop index \`inbox_messages_seq_unique\`;`);
    this.addSql(
      `create unique index \`inbox_messages_target_run_id_seq_unique\` on \`inbox_messages\` (\`target_run_id\`, \`seq\`);`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index \`inbox_messages_target_run_id_seq_unique\`;`);
    this.addSql(`create unique index \`inbox_messages_seq_unique\` on \`inbox_messages\` (\`seq\`);`);
  }
}
