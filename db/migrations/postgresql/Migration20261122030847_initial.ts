import { Migration } from '@mikro-orm/migrations';

export class Migration20261122030847_initial extends Migration {
  override name = 'Migration20261122030847_initial';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "inbox_messages" ("id" varchar(32) not null, "seq" int not null, "target_run_id" varchar(32) not null, "delivered_run_id" varchar(32) null, "body" text not null, "priority" varchar(16) not null, "from_actor" varchar(255) not null, "state" varchar(16) not null, "created_at" timestamptz not null, "delivered_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`alter table "inbox_messages" add constraint "inbox_messages_seq_unique" unique ("seq");`);
    this.addSql(
      `create index "inbox_messages_target_run_id_state_index" on "inbox_messages" ("target_run_id", "state");`,
    );

    this.addSql(
      `create table "plan_runs" ("id" varchar(32) not null, "plan_id" varchar(255) null, "source" varchar(16) not null, "project_id" varchar(32) not null, "agent_name" varchar(255) not null, "prompt_template" text not null, "ref" varchar(255) null, "provider_override" varchar(255) null, "model_override" varchar(255) null, "max_cost_usd" double precision null, "dispatcher_handle" varchar(255) not null, "trigger" varchar(64) not null, "state" varchar(16) not null, "failure_reason" text null, "created_at" timestamptz not null, "started_at" timestamptz null, "ended_at" timestamptz null, "resumed_at" timestamptz null, "updated_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "plan_runs_project_id_created_at_index" on "plan_runs" ("project_id", "created_at");`);
    this.addSql(`create index "plan_runs_state_index" on "plan_runs" ("state");`);

    this.addSql(
      `create table "plan_run_children" ("plan_run_id" varchar(32) not null, "seq" int not null, "seed_id" varchar(255) not null, "run_id" varchar(32) null, "state" varchar(16) not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "started_at" timestamptz null, "ended_at" timestamptz null, "pr_merged_at" timestamptz null, "failure_reason" text null, "retry_count" int not null default 0, primary key ("plan_run_id", "seq"));`,
    );
    this.addSql(`create index "plan_run_children_run_id_index" on "plan_run_children" ("run_id");`);

    this.addSql(
      `create table "projects" ("id" varchar(32) not null, "git_url" varchar(512) not null, "local_path" text not null, "default_branch" varchar(255) not null, "added_at" timestamptz not null, "last_fetched_at" timestamptz null, "last_head_sha" varchar(64) null, "has_seeds" boolean not null default false, primary key ("id"));`,
    );
    this.addSql(`alter table "projects" add constraint "projects_git_url_unique" unique ("git_url");`);

    this.addSql(
      `create table "runs" ("id" varchar(32) not null, "agent_name" varchar(255) not null, "project_id" varchar(32) null, "sandbox_id" varchar(64) null, "sandbox_run_id" varchar(128) null, "seed_id" varchar(255) null, "parent_run_id" varchar(32) null, "clone_kind" varchar(16) null, "mode" varchar(16) not null default 'batch', "provider" varchar(255) null, "model" varchar(255) null, "rendered_agent_json" jsonb null, "state" varchar(16) not null, "failure_reason" varchar(32) null, "created_at" bigint not null, "started_at" timestamptz null, "ended_at" timestamptz null, "commits_ahead" int null, "files_changed" int null, "insertions" int null, "deletions" int null, "prompt" text not null, "trigger" varchar(64) not null, "pr_url" text null, "pr_state" varchar(16) null, "pr_merged_at" timestamptz null, "target_branch" varchar(255) null, "ref" varchar(255) null, "base_commit" varchar(40) null, "branch" varchar(255) null, "salvage_ref" varchar(255) null, "salvage_path" text null, "cost_usd" double precision null, "max_cost_usd" double precision null, "tokens_input" int null, "tokens_output" int null, "tokens_cache_read" int null, "tokens_cache_write" int null, "preview_state" varchar(16) null, "preview_port" int null, "preview_started_at" timestamptz null, "preview_last_hit_at" timestamptz null, "preview_failure_message" text null, "cost_basis" varchar(32) not null default 'api', "workspace_path" text null, "dispatcher_handle" varchar(255) null, "last_event_seq" int not null default 0, "projection_version" int not null default 0, "updated_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "runs_project_id_created_at_index" on "runs" ("project_id", "created_at");`);
    this.addSql(`create index "runs_agent_name_created_at_index" on "runs" ("agent_name", "created_at");`);
    this.addSql(`create index "runs_state_index" on "runs" ("state");`);

    this.addSql(
      `create table "run_events" ("id" serial primary key, "run_id" varchar(32) not null, "seq" int not null, "ts" timestamptz not null, "kind" varchar(128) not null, "stream" varchar(16) null, "payload" jsonb null, "dedupe_key" varchar(255) not null);`,
    );
    this.addSql(`alter table "run_events" add constraint "run_events_run_id_seq_unique" unique ("run_id", "seq");`);
    this.addSql(
      `alter table "run_events" add constraint "run_events_run_id_dedupe_key_unique" unique ("run_id", "dedupe_key");`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "inbox_messages" cascade;`);
    this.addSql(`drop table if exists "plan_runs" cascade;`);
    this.addSql(`drop table if exists "plan_run_children" cascade;`);
    this.addSql(`drop table if exists "projects" cascade;`);
    this.addSql(`drop table if exists "runs" cascade;`);
    this.addSql(`drop table if exists "run_events" cascade;`);
  }
}
