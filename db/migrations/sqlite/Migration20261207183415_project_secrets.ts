import { Migration } from '@mikro-orm/migrations';

export class Migration20261207183415_project_secrets extends Migration {
  override name = 'Migration20261207183415_project_secrets';

  override up(): void | Promise<void> {
    this.addSql(
      `create table \`project_secrets\` (\`project_id\` text not null, \`name\` text not null, \`scope\` text not null, \`sealed\` text not null, \`key_id\` text not null, \`created_at\` datetime not null, \`updated_at\` datetime not null, primary key (\`project_id\`, \`name\`));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`project_secrets\`;`);
  }
}
