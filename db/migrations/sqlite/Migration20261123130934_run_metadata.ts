import { Migration } from '@mikro-orm/migrations';

export class Migration20261123130934_run_metadata extends Migration {
  override name = 'Migration20261123130934_run_metadata';

  override up(): void | Promise<void> {
    this.addSql(`alter table \`runs\` add column \`metadata\` json null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table \`runs\` drop column \`metadata\`;`);
  }
}
