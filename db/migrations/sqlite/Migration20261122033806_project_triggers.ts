import { Migration } from '@mikro-orm/migrations';

export class Migration20261122033806_project_triggers extends Migration {
  override name = 'Migration20261122033806_project_triggers';

  override up(): void | Promise<void> {
    this.addSql(
      `create table \`project_triggers\` (\`project_id\` text not null, \`trigger_id\` text not null, \`schedule_id\` text not null, \`cron\` text not null, \`timezone\` text null, \`last_fired_at\` datetime null, \`last_run_id\` text null, \`schedule_error\` text null, \`synced_at\` datetime not null, primary key (\`project_id\`, \`trigger_id\`));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`project_triggers\`;`);
  }
}
