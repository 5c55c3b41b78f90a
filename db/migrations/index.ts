import type { MigrationObject } from '@mikro-orm/core';
import type { DbDialect } from '../dialect.ts';
import { Migration20261122030847_initial as SqliteInitial } from './sqlite/Migration20261122030847_initial.ts';
import { Migration20261122030847_initial as PostgresInitial } from './postgresql/Migration20261122030847_initial.ts';
import { Migration20261122033806_project_triggers as SqliteProjectTriggers } from './sqlite/Migration20261122033806_project_triggers.ts';
import { Migration20261122033806_project_triggers as PostgresProjectTriggers } from './postgresql/Migration20261122033806_project_triggers.ts';
import { Migration20261122035642_inbox_seq_per_run as SqliteInboxSeq } from './sqlite/Migration20261122035642_inbox_seq_per_run.ts';
import { Migration20261122035642_inbox_seq_per_run as PostgresInboxSeq } from './postgresql/Migration20261122035642_inbox_seq_per_run.ts';
import { Migration20261122060356_plan_run_projection_version as SqlitePlanRunVersion } from './sqlite/Migration20261122060356_plan_run_projection_version.ts';
import { Migration20261122060356_plan_run_projection_version as PostgresPlanRunVersion } from './postgresql/Migration20261122060356_plan_run_projection_version.ts';
import { Migration20261122065343_lifecycle_events as SqliteLifecycleEvents } from './sqlite/Migration20261122065343_lifecycle_events.ts';
import { Migration20261122065343_lifecycle_events as PostgresLifecycleEvents } from './postgresql/Migration20261122065343_lifecycle_events.ts';
import { Migration20261123130934_run_metadata as SqliteRunMetadata } from './sqlite/Migration20261123130934_run_metadata.ts';
import { Migration20261123130934_run_metadata as PostgresRunMetadata } from './postgresql/Migration20261123130934_run_metadata.ts';
import { Migration20261123161113_runs_created_at as SqliteRunsCreatedAt } from './sqlite/Migration20261123161113_runs_created_at.ts';
import { Migration20261123161113_runs_created_at as PostgresRunsCreatedAt } from './postgresql/Migration20261123161113_runs_created_at.ts';
import { Migration20261123173744_runs_analytics_indexes as SqliteRunsAnalytics } from './sqlite/Migration20261123173744_runs_analytics_indexes.ts';
import { Migration20261123173744_runs_analytics_indexes as PostgresRunsAnalytics } from './postgresql/Migration20261123173744_runs_analytics_indexes.ts';
import { Migration20261124221059_run_preview_host as SqliteRunPreviewHost } from './sqlite/Migration20261124221059_run_preview_host.ts';
import { Migration20261125042511_run_queue_reason as SqliteRunQueueReason } from './sqlite/Migration20261125042511_run_queue_reason.ts';
import { Migration20261125042511_run_queue_reason as PostgresRunQueueReason } from './postgresql/Migration20261125042511_run_queue_reason.ts';
import { Migration20261125043920_webhooks as SqliteWebhooks } from './sqlite/Migration20261125043920_webhooks.ts';
import { Migration20261125043920_webhooks as PostgresWebhooks } from './postgresql/Migration20261125043920_webhooks.ts';
import { Migration20261125045717_run_pr_rounds as SqliteRunPrRounds } from './sqlite/Migration20261125045717_run_pr_rounds.ts';
import { Migration20261125045717_run_pr_rounds as PostgresRunPrRounds } from './postgresql/Migration20261125045717_run_pr_rounds.ts';
import { Migration20261125074421_run_paused_reason as SqliteRunPausedReason } from './sqlite/Migration20261125074421_run_paused_reason.ts';
import { Migration20261125074421_run_paused_reason as PostgresRunPausedReason } from './postgresql/Migration20261125074421_run_paused_reason.ts';
import { Migration20261124221059_run_preview_host as PostgresRunPreviewHost } from './postgresql/Migration20261124221059_run_preview_host.ts';
import { Migration20261125015719_run_totals as SqliteRunTotals } from './sqlite/Migration20261125015719_run_totals.ts';
import { Migration20261125015719_run_totals as PostgresRunTotals } from './postgresql/Migration20261125015719_run_totals.ts';
import { Migration20261125020145_runs_list_indexes as SqliteRunsListIndexes } from './sqlite/Migration20261125020145_runs_list_indexes.ts';
import { Migration20261125020145_runs_list_indexes as PostgresRunsListIndexes } from './postgresql/Migration20261125020145_runs_list_indexes.ts';
import { Migration20261202173349_retention_passes as SqliteRetentionPasses } from './sqlite/Migration20261202173349_retention_passes.ts';
import { Migration20261202173349_retention_passes as PostgresRetentionPasses } from './postgresql/Migration20261202173349_retention_passes.ts';
import { Migration20261202173429_one_time_secrets as SqliteOneTimeSecrets } from './sqlite/Migration20261202173429_one_time_secrets.ts';
import { Migration20261202173429_one_time_secrets as PostgresOneTimeSecrets } from './postgresql/Migration20261202173429_one_time_secrets.ts';
import { Migration20261207182555_compact_output as SqliteCompactOutput } from './sqlite/Migration20261207182555_compact_output.ts';
import { Migration20261207182555_compact_output as PostgresCompactOutput } from './postgresql/Migration20261207182555_compact_output.ts';
import { Migration20261207183415_project_secrets as SqliteProjectSecrets } from './sqlite/Migration20261207183415_project_secrets.ts';
import { Migration20261207183415_project_secrets as PostgresProjectSecrets } from './postgresql/Migration20261207183415_project_secrets.ts';

// Listed explicitly rather than discovered from disk, so the same list works from source and from
// tests, and an unlisted file can never run by accident. A new migration pair is added here.
const MIGRATIONS: Record<DbDialect, MigrationObject[]> = {
  sqlite: [
    { name: 'Migration20261122030847_initial', class: SqliteInitial },
    { name: 'Migration20261122033806_project_triggers', class: SqliteProjectTriggers },
    { name: 'Migration20261122035642_inbox_seq_per_run', class: SqliteInboxSeq },
    { name: 'Migration20261122060356_plan_run_projection_version', class: SqlitePlanRunVersion },
    { name: 'Migration20261122065343_lifecycle_events', class: SqliteLifecycleEvents },
    { name: 'Migration20261123130934_run_metadata', class: SqliteRunMetadata },
    { name: 'Migration20261123161113_runs_created_at', class: SqliteRunsCreatedAt },
    { name: 'Migration20261123173744_runs_analytics_indexes', class: SqliteRunsAnalytics },
    { name: 'Migration20261124221059_run_preview_host', class: SqliteRunPreviewHost },
    { name: 'Migration20261125015719_run_totals', class: SqliteRunTotals },
    { name: 'Migration20261125020145_runs_list_indexes', class: SqliteRunsListIndexes },
    { name: 'Migration20261125042511_run_queue_reason', class: SqliteRunQueueReason },
    { name: 'Migration20261125043920_webhooks', class: SqliteWebhooks },
    { name: 'Migration20261125045717_run_pr_rounds', class: SqliteRunPrRounds },
    { name: 'Migration20261125074421_run_paused_reason', class: SqliteRunPausedReason },
    { name: 'Migration20261202173349_retention_passes', class: SqliteRetentionPasses },
    { name: 'Migration20261202173429_one_time_secrets', class: SqliteOneTimeSecrets },
    { name: 'Migration20261207182555_compact_output', class: SqliteCompactOutput },
    { name: 'Migration20261207183415_project_secrets', class: SqliteProjectSecrets },
  ],
  postgresql: [
    { name: 'Migration20261122030847_initial', class: PostgresInitial },
    { name: 'Migration20261122033806_project_triggers', class: PostgresProjectTriggers },
    { name: 'Migration20261122035642_inbox_seq_per_run', class: PostgresInboxSeq },
    { name: 'Migration20261122060356_plan_run_projection_version', class: PostgresPlanRunVersion },
    { name: 'Migration20261122065343_lifecycle_events', class: PostgresLifecycleEvents },
    { name: 'Migration20261123130934_run_metadata', class: PostgresRunMetadata },
    { name: 'Migration20261123161113_runs_created_at', class: PostgresRunsCreatedAt },
    { name: 'Migration20261123173744_runs_analytics_indexes', class: PostgresRunsAnalytics },
    { name: 'Migration20261124221059_run_preview_host', class: PostgresRunPreviewHost },
    { name: 'Migration20261125015719_run_totals', class: PostgresRunTotals },
    { name: 'Migration20261125020145_runs_list_indexes', class: PostgresRunsListIndexes },
    { name: 'Migration20261125042511_run_queue_reason', class: PostgresRunQueueReason },
    { name: 'Migration20261125043920_webhooks', class: PostgresWebhooks },
    { name: 'Migration20261125045717_run_pr_rounds', class: PostgresRunPrRounds },
    { name: 'Migration20261125074421_run_paused_reason', class: PostgresRunPausedReason },
    { name: 'Migration20261202173349_retention_passes', class: PostgresRetentionPasses },
    { name: 'Migration20261202173429_one_time_secrets', class: PostgresOneTimeSecrets },
    { name: 'Migration20261207182555_compact_output', class: PostgresCompactOutput },
    { name: 'Migration20261207183415_project_secrets', class: PostgresProjectSecrets },
  ],
};

export function migrationsFor(dialect: DbDialect): MigrationObject[] {
  return MIGRATIONS[dialect];
}
