import { Migration } from '@mikro-orm/migrations';

// Chunk rows of agent output (docs/decisions/0047-compact-output-storage.md); older rows stay as they are.
export class Migration20261207182555_compact_output extends Migration {
  override name = 'Migration20261207182555_compact_output';

  override up(): void | Promise<void> {
    this.addSql(`alter table \`run_events\` add column \`last_seq\` integer null;`);
    this.addSql(`alter table \`run_events\` add column \`lines\` text null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table \`run_events\` drop column \`last_seq\`;`);
    this.addSql(`alter table \`run_events\` drop column \`lines\`;`);
  }
}
