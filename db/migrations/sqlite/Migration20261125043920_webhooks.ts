import { Migration } from '@mikro-orm/migrations';

export class Migration20261125043920_webhooks extends Migration {
  override name = 'Migration20261125043920_webhooks';

  override up(): void | Promise<void> {
    this.addSql(
      `create table \`webhooks\` (\`id\` text not null primary key, \`url\` text not null, \`hooks\` json null, \`description\` text null, \`source\` text not null, \`created_at\` datetime not null);`,
    );

    this.addSql(
      `create table \`webhook_deliveries\` (\`id\` text not null primary key, \`webhook_id\` text not null, \`event_id\` integer not null, \`hook\` text not null, \`run_id\` text not null, \`state\` text not null, \`attempts\` integer not null default 0, \`last_status_code\` integer null, \`last_error\` text null, \`last_attempt_at\` datetime null, \`next_attempt_at\` datetime null, \`delivered_at\` datetime null, \`created_at\` datetime not null);`,
    );
    this.addSql(
      `create index \`webhook_deliveries_webhook_id_event_id_index\` on \`webhook_deliveries\` (\`webhook_id\`, \`event_id\`);`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`webhooks\`;`);
    this.addSql(`drop table if exists \`webhook_deliveries\`;`);
  }
}
