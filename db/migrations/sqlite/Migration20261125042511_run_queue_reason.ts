import { Migration } from '@mikro-orm/migrations';

export class Migration20261125042511_run_queue_reason extends Migration {
  override name = 'Migration20261125042511_run_queue_reason';

  override up(): void | Promise<void> {
    this.addSql(`alter table \`runs\` add column \`queue_reason\` text null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table \`runs\` drop column \`queue_reason\`;`);
  }
}
