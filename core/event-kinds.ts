// The vocabularies of svc's event logs, in one place: the kind of every event svc itself writes
// to a run's log, and the lifecycle hooks of GET /events/stream. Agents' own lines are an open
// vocabulary under `agent.` (each runtime adapter maps its output there). docs/events.md lists
// them all, with what each means; a test keeps the two in step.

/** Every event kind svc writes to a run's log (plan-run events go to a child run's log). */
export const RUN_EVENT_KINDS = [
  // The agent's process, as the sandbox saw it, and its lines every runtime normalises alike.
  'log.stdout',
  'log.stderr',
  'state_change',
  'assistant',
  'tool_use',
  'tool_result',
  'usage',
  'sandbox.started',
  'sandbox.oom_kill',
  'sandbox.egress_refused',
  'output.truncated',
  // The repository's environment (.svc/environment.yaml): its setup, before the agent starts.
  'environment.building',
  'environment.log',
  'environment.ready',
  'environment.service_ready',
  // Operators and limits.
  'admission.waiting',
  'admission.granted',
  'steer.sent',
  'steer.delivered',
  'cancel.requested',
  'cost.cap_exceeded',
  'workspace.too_large',
  'run.paused',
  'run.resumed',
  'duration.exceeded',
  'watchdog.silence_exceeded',
  // Finalize: the sandbox's part, then svc's (push, PR, salvage).
  'finalize.intent_parked',
  'finalize.result',
  'reap.empty_push',
  'branch_pushed',
  'reap.pr_opened',
  'reap.pr_open_failed',
  'reap.pr_open_skipped',
  'reap.workspace_salvaged',
  'reap.workspace_salvage_failed',
  'reap.workspace_salvage_recorded',
  'pr.state_changed',
  // The open PR handed over to the workflow that follows it (workflows/pull-request.workflow.ts).
  'pr.follow_started',
  // The PR loop (workflows/pr-loop.ts): rounds, merges, comments.
  'pr_loop.follow_up_started',
  'pr_loop.follow_up_ended',
  'pr_loop.merge_requested',
  'pr_loop.merge_refused',
  'pr_loop.commented',
  'pr_loop.stopped',
  // A run's preview (workflows/run-preview.ts).
  'preview.starting',
  'preview.made_room',
  'preview.live',
  'preview.failed',
  'preview.torn_down',
  // svc's own failures and repairs.
  'run.internal_failure',
  'run.reconciled',
  // A plan-run's events, in the log of its most recently dispatched child run.
  'plan_run.dispatched',
  'plan_run.advanced',
  'plan_run.waiting_for_merge',
  'plan_run.merged',
  'plan_run.skipped',
  'plan_run.child_retried',
  'plan_run.failed',
  'plan_run.succeeded',
  'plan_run.cancelled',
  'plan_run.cancel_child_failed',
  'plan_run.resumed',
  'plan_run.internal_failure',
] as const;

/**
 * Kinds the interface documents that svc does not write, each with the kinds that carry its fact
 * (docs/events.md, "Kinds of the interface written as others"). Writing them too would tell each
 * fact twice, to every reader that counts events (webhook receivers, the dashboard, analytics).
 */
export const INTERFACE_KINDS_WRITTEN_AS = {
  // The reap is svc's finalize: its result, then the run's terminal envelope.
  'reap.completed': ['finalize.result', 'state_change'],
  // A finalize failure ends the run with its reason (finalize_failed, finalize_unposted, …); a phase
  // that broke inside svc says so first.
  reap_failed: ['state_change', 'run.internal_failure'],
  // A child's PR not merged in time fails the plan-run with reason child_pr_merge_timeout.
  'plan_run.merge_stalled': ['plan_run.failed'],
  // The reconciler's repair of a run whose workflow closed under it.
  'watchdog.terminal_reconciled': ['run.reconciled'],
  // The kernel's kill, then the run's end with failure reason oom_killed.
  oom_killed: ['sandbox.oom_kill', 'state_change'],
} as const satisfies Record<string, readonly (typeof RUN_EVENT_KINDS)[number][]>;

/** A kind in a run's log: one of svc's, or an agent's own line (`agent.<its type>`). */
export type RunEventKind = (typeof RUN_EVENT_KINDS)[number] | `agent.${string}`;

/** The hooks of GET /events/stream, each with the run state it reports (docs/events.md). */
// Beyond the reference: `pr_merged` and `pr_closed`, so a client holding the stream (the dashboard)
// also follows a run's PR after the run ended, when nothing else about the run changes.
export const LIFECYCLE_HOOKS = [
  'run_dispatched',
  'run_started',
  'branch_pushed',
  'pre_reap',
  'post_reap',
  'pr_merged',
  'pr_closed',
] as const;
export type LifecycleHook = (typeof LIFECYCLE_HOOKS)[number];

/**
 * The events of one answer of GET /runs/{id}/events that does not follow, at most (and without a
 * limit): a client reads on with since=<last seq> until a page comes back empty; GET /runs/{id}/log
 * streams the whole log.
 */
export const RUN_EVENTS_PAGE = 10_000;
/**
 * The bytes of such a forward page, about: it ends at the first line past them (a line holds at most
 * 1 MiB of output), so 10,000 long lines never make one answer of gigabytes.
 */
export const RUN_EVENTS_PAGE_BYTES = 4 * 1024 * 1024;
