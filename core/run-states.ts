// Run vocabulary of the HTTP interface (docs/api.md). Pure: imported by workflows, activities and the API.

export const RUN_STATES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type RunState = (typeof RUN_STATES)[number];

export const TERMINAL_RUN_STATES: readonly RunState[] = ['succeeded', 'failed', 'cancelled'];

export function isTerminalRunState(state: RunState): boolean {
  return TERMINAL_RUN_STATES.includes(state);
}

export const RUN_FAILURE_REASONS = [
  'never_started',
  'no_model_response',
  'sandbox_failed',
  'spawn_failed',
  'crashed',
  'agent_died',
  'timed_out',
  'sandbox_run_lost',
  'sandbox_unreachable',
  'dropped_commit',
  'no_changes',
  'finalize_failed',
  'push_rejected_policy',
  'finalize_unposted',
  'provider_error',
  'oom_killed',
  'evicted',
  'workspace_too_large',
  'disk_nearly_full',
  'environment_invalid',
  'environment_setup_failed',
  'environment_services_failed',
] as const;
export type RunFailureReason = (typeof RUN_FAILURE_REASONS)[number];

export const CLONE_KINDS = ['replicate', 'continue'] as const;
export type CloneKind = (typeof CLONE_KINDS)[number];

export const PR_STATES = ['open', 'merged', 'closed_unmerged'] as const;
export type PrState = (typeof PR_STATES)[number];

export const PREVIEW_STATES = ['starting', 'live', 'failed', 'torn-down'] as const;
export type PreviewState = (typeof PREVIEW_STATES)[number];

export const COST_BASES = ['api', 'subscription_estimate'] as const;
export type CostBasis = (typeof COST_BASES)[number];

export const EVENT_STREAMS = ['stdout', 'stderr', 'system'] as const;
export type EventStream = (typeof EVENT_STREAMS)[number];

/** Where a plan-run's seeds come from: a plan of the project's seeds, or a list of issues. */
export const PLAN_RUN_SOURCES = ['plan', 'issues'] as const;
export type PlanRunSource = (typeof PLAN_RUN_SOURCES)[number];

export const PLAN_RUN_STATES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type PlanRunState = (typeof PLAN_RUN_STATES)[number];

export const PLAN_RUN_CHILD_STATES = [
  'pending',
  'dispatched',
  'running',
  'pr_open',
  'merged',
  'failed',
  'skipped',
] as const;
export type PlanRunChildState = (typeof PLAN_RUN_CHILD_STATES)[number];

export const INBOX_PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;
export type InboxPriority = (typeof INBOX_PRIORITIES)[number];

export const INBOX_STATES = ['unread', 'delivered', 'failed'] as const;
export type InboxState = (typeof INBOX_STATES)[number];

/** Where in its life a run is: what a failure there makes of it. */
export const RUN_PHASES = [
  'accepting',
  'admission',
  'workspace',
  'starting',
  'supervising',
  'paused',
  'finalizing',
] as const;
export type RunPhase = (typeof RUN_PHASES)[number];

/**
 * The type of a failure inside prepareAndStartAgent before its agent's launch (the workspace cut,
 * or asking the workflow): the workflow tells it from a failed start by it, and ends the run
 * `never_started` as a failed prepareWorkspace does.
 */
export const NOT_LAUNCHED = 'not_launched';

/**
 * The type of prepareAndStartAgent's refusal to cut a workspace on a worker whose data directory
 * is below the operator's free-space floor: the run ends with this reason, its agent never started.
 */
export const DISK_NEARLY_FULL = 'disk_nearly_full' satisfies RunFailureReason;

/** The failure reason closest to a phase that broke for good (an activity out of retries, a bug). */
export const FAILURE_BY_PHASE: Record<RunPhase, RunFailureReason> = {
  accepting: 'never_started',
  admission: 'never_started',
  workspace: 'never_started',
  starting: 'sandbox_failed',
  supervising: 'sandbox_run_lost',
  paused: 'sandbox_failed',
  finalizing: 'finalize_failed',
};
