import { FIELD_LIMITS } from '../../core/field-limits.ts';
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { CloneKind, CostBasis, PreviewState, PrState, RunFailureReason, RunState } from '../../core/run-states.ts';
import type { RunSnapshot } from '../../core/run-model.ts';
import type { RunJson } from '../../core/run-schema.ts';

const measureIndex = (name: string, value: string, present: string) => ({
  name,
  expression: `create index "${name}" on "runs" (${value}, "created_at", "project_id") where ${present}`,
});
const ANALYTICS_INDEXES = [
  {
    name: 'runs_analytics_index',
    expression: `create index "runs_analytics_index" on "runs" (("created_at" / 86400000), "agent_name", "model",
      "provider", "project_id", "failure_reason", "state", "pr_state", "tokens_input", "tokens_output",
      "tokens_cache_read", "tokens_cache_write", "cost_usd", "started_at", "ended_at", "pr_merged_at", "created_at")`,
  },
  measureIndex(
    'runs_duration_ms_index',
    '("ended_at" - "started_at")',
    '"started_at" is not null and "ended_at" is not null',
  ),
  measureIndex('runs_queue_wait_ms_index', '("started_at" - "created_at")', '"started_at" is not null'),
  measureIndex(
    'runs_time_to_merge_ms_index',
    '("pr_merged_at" - "ended_at")',
    '"pr_merged_at" is not null and "ended_at" is not null',
  ),
  measureIndex('runs_cost_usd_index', '"cost_usd"', '"cost_usd" is not null'),
];

// The projection of one runWorkflow. Every column the spec's Run carries, plus the bookkeeping the
// service needs (workspace, branch, caps, the per-run event counter). Written only by activities.
export const RunEntity = defineEntity({
  name: 'Run',
  tableName: 'runs',
  indexes: [
    { properties: ['projectId', 'createdAt'] },
    { properties: ['agentName', 'createdAt'] },
    // GET /runs by state, newest first, walks this instead of sorting every run in the state.
    { properties: ['state', 'createdAt'] },
    // GET /runs?sort=cost: the page is the index's end, not a sort of every run.
    { properties: ['costUsd', 'createdAt'] },
    // The analytics windows (all projects) are created_at ranges: without this, every one is a full scan.
    { properties: ['createdAt'] },
    // GET /analytics/runs (db/repositories/analytics-runs-sql.ts): every column it groups and sums,
    // led by the UTC day, so SQLite groups a window without sorting or reading the table; and one
    // index per measure, ordered by it, where a median or p95 is the run at its rank. Schema diffs
    // match expression indexes by name: these are SQLite's forms, the PostgreSQL migration has its own.
    ...ANALYTICS_INDEXES,
  ],
  properties: {
    id: p.string().primary().length(FIELD_LIMITS.id),
    agentName: p.string().length(FIELD_LIMITS.name),
    projectId: p.string().length(FIELD_LIMITS.id).nullable(),
    sandboxId: p.string().length(64).nullable(),
    sandboxRunId: p.string().length(128).nullable(),
    seedId: p.string().length(FIELD_LIMITS.name).nullable(),
    parentRunId: p.string().length(FIELD_LIMITS.id).nullable(),
    cloneKind: p.string().$type<CloneKind>().length(16).nullable(),
    mode: p.string().length(16).default('batch'),
    provider: p.string().length(FIELD_LIMITS.name).nullable(),
    model: p.string().length(FIELD_LIMITS.name).nullable(),
    renderedAgentJson: p.json<Record<string, unknown>>().nullable(),
    metadata: p.json<Record<string, unknown>>().nullable(),
    state: p.string().$type<RunState>().length(16),
    queueReason: p.text().nullable(),
    pausedReason: p.text().nullable(),
    prRounds: p.integer().nullable(),
    prCostUsd: p.double().nullable(),
    failureReason: p.string().$type<RunFailureReason>().length(32).nullable(),
    // Epoch milliseconds: the spec makes a run's createdAt a number, unlike every other timestamp.
    createdAt: p.bigint('number'),
    startedAt: p.datetime().nullable(),
    endedAt: p.datetime().nullable(),
    commitsAhead: p.integer().nullable(),
    filesChanged: p.integer().nullable(),
    insertions: p.integer().nullable(),
    deletions: p.integer().nullable(),
    prompt: p.text(),
    trigger: p.string().length(FIELD_LIMITS.trigger),
    prUrl: p.text().nullable(),
    prState: p.string().$type<PrState>().length(16).nullable(),
    prMergedAt: p.datetime().nullable(),
    targetBranch: p.string().length(FIELD_LIMITS.name).nullable(),
    ref: p.string().length(FIELD_LIMITS.name).nullable(),
    baseCommit: p.string().length(40).nullable(),
    branch: p.string().length(FIELD_LIMITS.name).nullable(),
    salvageRef: p.string().length(FIELD_LIMITS.name).nullable(),
    salvagePath: p.text().nullable(),
    costUsd: p.double().nullable(),
    maxCostUsd: p.double().nullable(),
    tokensInput: p.integer().nullable(),
    tokensOutput: p.integer().nullable(),
    tokensCacheRead: p.integer().nullable(),
    tokensCacheWrite: p.integer().nullable(),
    previewState: p.string().$type<PreviewState>().length(16).nullable(),
    previewPort: p.integer().nullable(),
    previewStartedAt: p.datetime().nullable(),
    previewLastHitAt: p.datetime().nullable(),
    previewFailureMessage: p.text().nullable(),
    // Where the proxy reaches the preview: its worker's SVC_PREVIEW_WORKER_HOST, or its Service's IP.
    previewHost: p.string().length(255).nullable(),
    costBasis: p.string().$type<CostBasis>().length(32).default('api'),
    workspacePath: p.text().nullable(),
    dispatcherHandle: p.string().length(FIELD_LIMITS.name).nullable(),
    // Allocates each RunEvent's per-run seq atomically (UPDATE … RETURNING).
    lastEventSeq: p.integer().default(0),
    // Grows with every projection from the workflow; an older projection never overwrites a newer.
    projectionVersion: p.integer().default(0),
    updatedAt: p.datetime(),
  },
});

export type Run = InferEntity<typeof RunEntity>;

/** Compiles only when T is true: a compile-time check with no runtime trace. */
type Assert<T extends true> = T;
/** Every field of the spec's Run (core/run-schema.ts) and of the workflow's snapshot is a column. */
export type EveryRunFieldIsAColumn = Assert<
  [Exclude<keyof RunSnapshot | keyof RunJson, keyof Run>] extends [never] ? true : false
>;
