import { Migration } from '@mikro-orm/migrations';

export class Migration20261124221059_run_preview_host extends Migration {
  override name = 'Migration20261124221059_run_preview_host';

  override up(): void | Promise<void> {
    this.addSql(`alter table "runs" add "preview_host" varchar(255) null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "runs" drop column "preview_host";`);
  }
}
