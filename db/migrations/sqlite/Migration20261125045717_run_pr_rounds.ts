import { Migration } from '@mikro-orm/migrations';

export class Migration20261125045717_run_pr_rounds extends Migration {
  override name = 'Migration20261125045717_run_pr_rounds';

  override up(): void | Promise<void> {
    this.addSql(`alter table \`runs\` add column \`pr_rounds\` integer null;`);
    this.addSql(`alter table \`runs\` add column \`pr_cost_usd\` double null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table \`runs\` drop column \`pr_rounds\`;`);
    this.addSql(`alter table \`runs\` drop column \`pr_cost_usd\`;`);
  }
}
