// The plan-run as planRunWorkflow holds it: the plan row, its children, and the rules that move
// them. Pure: the workflow, the activities that project it and the API that presents it share it.
import type { AgentDefinition } from './agents.ts';
import type { RunSnapshot, RunTiming } from './run-model.ts';
import type { PlanRunChildJson, PlanRunJson } from './plan-run-schema.ts';
import type { PlanRunSource, PlanRunState, PrState, RunFailureReason, RunState } from './run-states.ts';

export const DEFAULT_PROMPT_TEMPLATE = 'work on sd {seed_id}';

export interface PlanTiming {
  /**
   * How long an open child PR may wait to be merged (0: for ever), from the later of the run's end and the plan's
   * resume.
   */
  mergeTimeoutMs: number;
  /** How often a child's run looks at its open PR while the plan waits on it. */
  mergePollMs: number;
}

export const DEFAULT_PLAN_TIMING: PlanTiming = { mergeTimeoutMs: 1_800_000, mergePollMs: 15_000 };

/** A child as the plan's workflow holds it: the API's child (core/plan-run-schema.ts) and its working state. */
export type PlanChild = Omit<PlanRunChildJson, 'planRunId'> & {
  retryCount: number;
  /** The child run's PR, while the plan waits for it to be merged (the run's own row keeps it). */
  prUrl: string | null;
};

/**
 * What a plan-run applies to every child it dispatches. `maxCostUsd` is the per-child cap: the run
 * tier of the cap precedence.
 */
export type PlanChildSettings = Pick<
  PlanRunJson,
  'promptTemplate' | 'ref' | 'providerOverride' | 'modelOverride' | 'maxCostUsd' | 'dispatcherHandle'
>;

/** The plan-run as its workflow holds it: the API's PlanRun (core/plan-run-schema.ts), its children. */
export type PlanRunSnapshot = PlanRunJson & {
  children: PlanChild[];
  /** Grows with every projection, so a late retry of an older projection never wins. */
  projectionVersion: number;
};

export interface PlanRunWorkflowInput extends PlanChildSettings {
  planRunId: string;
  createdAt: string;
  planId: string | null;
  source: PlanRunSource;
  projectId: string;
  /** Resolved when the plan-run was accepted: every child runs the same definition. */
  agent: AgentDefinition;
  trigger: string;
  seedIds: string[];
  timing: PlanTiming;
  runTiming: RunTiming;
  /** A resumed plan-run: a new execution of the same workflow id, carrying the children as they ended. */
  resume?: {
    children: PlanChild[];
    resumedAt: string;
    /** What the plan-run is resumed from: its failure reason, or `cancelled`. */
    reason: string;
    /** The operator's own words, if any. */
    note?: string | null;
    startedAt: string | null;
    projectionVersion: number;
  } | null;
}

/** What a child run tells its plan whenever its state or its PR's state changes. */
export interface ChildRunProgress {
  planRunId: string;
  seq: number;
  runId: string;
  state: RunState;
  failureReason: RunFailureReason | null;
  prUrl: string | null;
  prState: PrState | null;
  prMergedAt: string | null;
  endedAt: string | null;
  /** The run pushed nothing (0 commits ahead): a success with nothing to merge. Absent in old histories. */
  emptyPush?: boolean;
}

export interface PlanRunOutcome {
  planRunId: string;
  state: PlanRunState;
  failureReason: string | null;
  children: PlanChild[];
  startedAt: string | null;
  /** `{}` when no child was cancelled (null in histories of earlier releases). */
  cancelledChild: { childSeq: number; runId: string } | Record<string, never> | null;
  /** The last projection's version: a resumed execution projects above it. */
  projectionVersion: number;
}

export const TERMINAL_PLAN_RUN_STATES: readonly PlanRunState[] = ['succeeded', 'failed', 'cancelled'];
export const isTerminalPlanRunState = (state: PlanRunState) => TERMINAL_PLAN_RUN_STATES.includes(state);

/** Children the plan has finished with: they are never run again, resumed or not. */
export const isSettledChild = (child: PlanChild) => child.state === 'merged' || child.state === 'skipped';
export const isInFlightChild = (child: PlanChild) =>
  child.state === 'dispatched' || child.state === 'running' || child.state === 'pr_open';

export function initialPlanRunSnapshot(input: PlanRunWorkflowInput): PlanRunSnapshot {
  const children =
    input.resume?.children.map((child) => ({ ...child })) ??
    input.seedIds.map((seedId, index) => ({
      seq: index + 1,
      seedId,
      runId: null,
      state: 'pending' as const,
      createdAt: input.createdAt,
      updatedAt: input.createdAt,
      startedAt: null,
      endedAt: null,
      prMergedAt: null,
      failureReason: null,
      retryCount: 0,
      prUrl: null,
    }));
  return {
    id: input.planRunId,
    planId: input.planId,
    source: input.source,
    projectId: input.projectId,
    agentName: input.agent.name,
    promptTemplate: input.promptTemplate,
    ref: input.ref,
    providerOverride: input.providerOverride,
    modelOverride: input.modelOverride,
    maxCostUsd: input.maxCostUsd,
    dispatcherHandle: input.dispatcherHandle,
    trigger: input.trigger,
    state: input.resume ? 'running' : 'queued',
    failureReason: null,
    createdAt: input.createdAt,
    startedAt: input.resume?.startedAt ?? null,
    endedAt: null,
    resumedAt: input.resume?.resumedAt ?? null,
    children,
    projectionVersion: input.resume?.projectionVersion ?? 0,
  };
}

/**
 * The children a resumed plan-run starts from: merged and skipped children stay done; a child
 * that timed out waiting for its merge waits again on the same PR; an open PR is waited on again;
 * everything else unfinished is dispatched afresh. Null when nothing is left to resume.
 */
export function childrenToResume(children: PlanChild[], at: string): PlanChild[] | null {
  if (children.every(isSettledChild)) return null;
  return children.map((child) => {
    if (isSettledChild(child)) return { ...child };
    if ((child.state === 'failed' && child.failureReason === 'child_pr_merge_timeout') || child.state === 'pr_open') {
      return { ...child, state: 'pr_open', failureReason: null, endedAt: null, updatedAt: at };
    }
    if (child.state === 'pending') return { ...child };
    return {
      ...child,
      state: 'pending',
      runId: null,
      failureReason: null,
      startedAt: null,
      endedAt: null,
      prUrl: null,
      retryCount: 0,
      updatedAt: at,
    };
  });
}

export interface SeedText {
  id: string;
  title: string;
  description: string;
}

/** `{seed_id}` → the id; `{seed_body}` → title, a blank line, description (both trimmed). */
export function renderPlanPrompt(template: string, seed: SeedText): string {
  const body = [seed.title.trim(), seed.description.trim()].filter(Boolean).join('\n\n');
  return template.replaceAll('{seed_id}', seed.id).replaceAll('{seed_body}', body);
}

/** The child failure a finished run implies, or null when the run succeeded. */
export function childFailureFor(progress: Pick<ChildRunProgress, 'state' | 'failureReason'>): string | null {
  if (progress.state === 'succeeded') return null;
  return `child_${progress.failureReason ?? progress.state}`;
}

/** Where the dispatcher handle is used as an actor it must look like one. */
export function sanitizeHandle(handle: string | null | undefined): string {
  return handle && /^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(handle) ? handle : 'operator';
}

/** What a child run tells its plan-run about itself: the same from its signal and from a query. */
export function childProgressOf(
  run: Pick<
    RunSnapshot,
    'id' | 'state' | 'failureReason' | 'prUrl' | 'prState' | 'prMergedAt' | 'endedAt' | 'commitsAhead'
  >,
): Omit<ChildRunProgress, 'planRunId' | 'seq'> {
  return {
    runId: run.id,
    state: run.state,
    failureReason: run.failureReason,
    prUrl: run.prUrl,
    prState: run.prState,
    prMergedAt: run.prMergedAt,
    endedAt: run.endedAt,
    emptyPush: run.commitsAhead === 0,
  };
}
