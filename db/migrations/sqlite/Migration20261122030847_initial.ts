import { Migration } from '@mikro-orm/migrations';

export class Migration20261122030847_initial extends Migration {
  override name = 'Migration20261122030847_initial';

  override up(): void | Promise<void> {
    this.addSql(
      `create table \`inbox_messages\` (\`id\` text not null primary key, \`seq\` integer not null, \`target_run_id\` text not null, \`delivered_run_id\` text null, \`body\` text not null, \`priority\` text not null, \`from_actor\` text not null, \`state\` text not null, \`created_at\` datetime not null, \`delivered_at\` datetime null);`,
    );
    this.addSql(`create unique index \`inbox_messages_seq_unique\` on \`inbox_messages\` (\`seq\`);`);
    this.addSql(
      `create index \`inbox_messages_target_run_id_state_index\` on \`inbox_messages\` (\`target_run_id\`, \`state\`);`,
    );

    this.addSql(
      `create table \`plan_runs\` (\`id\` text not null primary key, \`plan_id\` text null, \`source\` text not null, \`project_id\` text not null, \`agent_name\` text not null, \`prompt_template\` text not null, \`ref\` text null, \`provider_override\` text null, \`model_override\` text null, \`max_cost_usd\` double null, \`dispatcher_handle\` text not null, \`trigger\` text not null, \`state\` text not null, \`failure_reason\` text null, \`created_at\` datetime not null, \`started_at\` datetime null, \`ended_at\` datetime null, \`resumed_at\` datetime null, \`updated_at\` datetime not null);`,
    );
    this.addSql(
      `create index \`plan_runs_project_id_created_at_index\` on \`plan_runs\` (\`project_id\`, \`created_at\`);`,
    );
    this.addSql(`create index \`plan_runs_state_index\` on \`plan_runs\` (\`state\`);`);

    this.addSql(
      `create table \`plan_run_children\` (\`plan_run_id\` text not null, \`seq\` integer not null, \`seed_id\` text not null, \`run_id\` text null, \`state\` text not null, \`created_at\` datetime not null, \`updated_at\` datetime not null, \`started_at\` datetime null, \`ended_at\` datetime null, \`pr_merged_at\` datetime null, \`failure_reason\` text null, \`retry_count\` integer not null default 0, primary key (\`plan_run_id\`, \`seq\`));`,
    );
    this.addSql(`create index \`plan_run_children_run_id_index\` on \`plan_run_children\` (\`run_id\`);`);

    this.addSql(
      `create table \`projects\` (\`id\` text not null primary key, \`git_url\` text not null, \`local_path\` text not null, \`default_branch\` text not null, \`added_at\` datetime not null, \`last_fetched_at\` datetime null, \`last_head_sha\` text null, \`has_seeds\` integer not null default false);`,
    );
    this.addSql(`create unique index \`projects_git_url_unique\` on \`projects\` (\`git_url\`);`);

    this.addSql(
      `create table \`runs\` (\`id\` text not null primary key, \`agent_name\` text not null, \`project_id\` text null, \`sandbox_id\` text null, \`sandbox_run_id\` text null, \`seed_id\` text null, \`parent_run_id\` text null, \`clone_kind\` text null, \`mode\` text not null default 'batch', \`provider\` text null, \`model\` text null, \`rendered_agent_json\` json null, \`state\` text not null, \`failure_reason\` text null, \`created_at\` bigint not null, \`started_at\` datetime null, \`ended_at\` datetime null, \`commits_ahead\` integer null, \`files_changed\` integer null, \`insertions\` integer null, \`deletions\` integer null, \`prompt\` text not null, \`trigger\` text not null, \`pr_url\` text null, \`pr_state\` text null, \`pr_merged_at\` datetime null, \`target_branch\` text null, \`ref\` text null, \`base_commit\` text null, \`branch\` text null, \`salvage_ref\` text null, \`salvage_path\` text null, \`cost_usd\` double null, \`max_cost_usd\` double null, \`tokens_input\` integer null, \`tokens_output\` integer null, \`tokens_cache_read\` integer null, \`tokens_cache_write\` integer null, \`preview_state\` text null, \`preview_port\` integer null, \`preview_started_at\` datetime null, \`preview_last_hit_at\` datetime null, \`preview_failure_message\` text null, \`cost_basis\` text not null default 'api', \`workspace_path\` text null, \`dispatcher_handle\` text null, \`last_event_seq\` integer not null default 0, \`projection_version\` integer not null default 0, \`updated_at\` datetime not null);`,
    );
    this.addSql(`create index \`runs_project_id_created_at_index\` on \`runs\` (\`project_id\`, \`created_at\`);`);
    this.addSql(`create index \`runs_agent_name_created_at_index\` on \`runs\` (\`agent_name\`, \`created_at\`);`);
    this.addSql(`create index \`runs_state_index\` on \`runs\` (\`state\`);`);

    this.addSql(
      `create table \`run_events\` (\`id\` integer not null primary key autoincrement, \`run_id\` text not null, \`seq\` integer not null, \`ts\` datetime not null, \`kind\` text not null, \`stream\` text null, \`payload\` json null, \`dedupe_key\` text not null);`,
    );
    this.addSql(`create unique index \`run_events_run_id_seq_unique\` on \`run_events\` (\`run_id\`, \`seq\`);`);
    this.addSql(
      `create unique index \`run_events_run_id_dedupe_key_unique\` on \`run_events\` (\`run_id\`, \`dedupe_key\`);`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists \`inbox_messages\`;`);
    this.addSql(`drop table if exists \`plan_runs\`;`);
    this.addSql(`drop table if exists \`plan_run_children\`;`);
    this.addSql(`drop table if exists \`projects\`;`);
    this.addSql(`drop table if exists \`runs\`;`);
    this.addSql(`drop table if exists \`run_events\`;`);
  }
}
