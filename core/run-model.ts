// The run as runWorkflow holds it. The workflow is the source of truth; this snapshot is what it
// projects into the read model and what the API presents. Timestamps are ISO-8601 UTC strings
// except createdAt, which the spec makes epoch milliseconds.
import type { PreviewPlan } from './preview.ts';
import type { AgentDefinition } from './agents.ts';
import type { CloneKind, RunFailureReason, RunState, PrState } from './run-states.ts';
import type { RunJson } from './run-schema.ts';
import type { ProjectPodSettings } from './svc-config.schema.ts';
import type { RunAdmission } from './admission-queue.ts';
import type { FollowUpKind, PrLoopSettings } from './pr-loop.ts';

/**
 * The run as its workflow holds it: the spec's Run (core/run-schema.ts, the one declaration of its
 * fields) with the agent typed, plus what only svc needs. Every Run field is here by construction.
 */
export type RunSnapshot = Omit<RunJson, 'renderedAgentJson' | 'createdAt' | 'metadata'> & {
  renderedAgentJson: AgentDefinition;
  createdAt: number;
  /** The dispatcher's own labels (POST /runs `metadata`; a plan child's {planRunId, planId, childSeq}). */
  metadata: Record<string, unknown> | null;
  baseCommit: string | null;
  branch: string | null;
  maxCostUsd: number | null;
  workspacePath: string | null;
  /** Where the proxy reaches a live preview at `previewPort`: its worker, or its pod's Service. */
  previewHost?: string | null;
  dispatcherHandle: string | null;
  /** Grows with every projection, so a late retry of an older projection never wins. */
  projectionVersion: number;
};

export interface RunWorkflowInput {
  runId: string;
  createdAt: number;
  agent: AgentDefinition;
  projectId: string | null;
  prompt: string;
  trigger: string;
  seedId: string | null;
  ref: string | null;
  baseCommit: string | null;
  targetBranch: string | null;
  dispatcherHandle: string | null;
  /** The run's sandbox: its id and workspace, and what the project asks of it. */
  sandbox: { id: string; workspacePath: string } & ProjectSandboxSettings;
  /** Set when a project trigger dispatched this run: the first projection records the fire. */
  triggerFire?: { projectId: string; triggerId: string } | null;
  /** A retry or follow-up of another run: `continue` cuts the workspace from the parent's pushed branch. */
  parent?: { runId: string; cloneKind: CloneKind; branch: string | null } | null;
  /** Project runs: the branch the run's work is pushed to, and what it is cut from and compared with. */
  branch?: string | null;
  baseBranch?: string | null;
  /** How long finalize waits for the sandbox's result, and how often an open PR is looked at. */
  timing?: RunTiming;
  /** A plan-run's child: the run tells that plan-run whenever its state or its PR's state changes. */
  planRun?: { planRunId: string; seq: number } | null;
  /** The dispatcher's own labels, stored with the run. */
  metadata?: Record<string, unknown> | null;
  /** The project's preview (`.svc/preview.yaml`), started once the run opened its PR. */
  preview?: PreviewPlan | null;
  /** The concurrency limits the run waits for a slot under (absent: none applied at its dispatch). */
  admission?: RunAdmission | null;
  /** What svc does about the run's PR once it is open (core/pr-loop.ts); absent: it only follows it. */
  prLoop?: PrLoopSettings | null;
  /** What crossing the cost cap does: `pause` waits for a raised cap (absent: the run is cancelled). */
  onCapHit?: 'pause' | null;
  /** A round of another run's PR loop: it pushes to that run's branch and leaves the PR to it. */
  followUp?: { rootRunId: string; kind: FollowUpKind; round: number } | null;
  /** The project's `repoContext`: put before the prompt the agent is given (the run's own prompt stays as asked). */
  repoContext?: string | null;
}

/**
 * What a project's `.svc/config.yaml` asks of its runs' sandboxes (the agent's and the preview's);
 * null or absent: the server's setting applies.
 */
export interface ProjectSandboxSettings {
  /** `resources.limits.memoryMiB`. */
  memoryLimitMiB?: number | null;
  /** `resources.network` and `resources.egress`. */
  network?: SandboxNetworkSettings | null;
  /** `agentImage` and `resources.limits.cpuMillicores`: the container and Kubernetes backends'. */
  image?: string | null;
  cpuMillicores?: number | null;
  /** `kubernetes`: the Kubernetes backend's pod settings. */
  pod?: ProjectPodSettings | null;
}

/** The project's sandbox settings alone, in the shape activities take (unset ones left out or null). */
export function projectSandbox(settings: ProjectSandboxSettings): ProjectSandboxSettings {
  return {
    memoryLimitMiB: settings.memoryLimitMiB ?? null,
    network: settings.network ?? null,
    ...(settings.image ? { image: settings.image } : {}),
    ...(settings.cpuMillicores ? { cpuMillicores: settings.cpuMillicores } : {}),
    ...(settings.pod ? { pod: settings.pod } : {}),
  };
}

/** A project's say on its agents' network: `none` (model endpoints only), `restricted`, `open` (any public host). */
export interface SandboxNetworkSettings {
  mode: 'none' | 'restricted' | 'open';
  /** Extra public destinations (egress allowlist entries). */
  egress: string[];
}

export interface RunTiming {
  finalizeTimeoutMs: number;
  /** A running agent silent (no output at all) for this long is stopped: timed_out. 0 = off. */
  silenceTimeoutMs: number;
  prPollMinMs: number;
  prPollMaxMs: number;
  prWatchMaxMs: number;
  /**
   * The instance's ceiling on an agent's time (SVC_MAX_RUN_MINUTES; 0 = none): an agent that keeps
   * printing is never stopped by the silence watchdog, and would hold its slot for ever. Absent in
   * runs dispatched before it existed.
   */
  maxRunMs?: number;
}

export const DEFAULT_RUN_TIMING: RunTiming = {
  finalizeTimeoutMs: 120_000,
  silenceTimeoutMs: 45 * 60_000,
  prPollMinMs: 60_000,
  prPollMaxMs: 3_600_000,
  prWatchMaxMs: 30 * 24 * 3_600_000,
};

/**
 * The default ceiling on an agent's time (SVC_MAX_RUN_MINUTES), set by the run's input
 * (core/run-input.ts). Not in DEFAULT_RUN_TIMING: a run whose input carries no timing has no ceiling.
 */
export const DEFAULT_MAX_RUN_MS = 24 * 3_600_000;

export interface RunOutcome {
  runId: string;
  state: RunState;
  failureReason: RunFailureReason | null;
  prUrl: string | null;
  prState: PrState | null;
  /** What the run cost (a PR loop adds its rounds' costs up). */
  costUsd?: number | null;
}

export function initialRunSnapshot(input: RunWorkflowInput): RunSnapshot {
  return {
    id: input.runId,
    agentName: input.agent.name,
    projectId: input.projectId,
    sandboxId: input.sandbox.id,
    sandboxRunId: null,
    seedId: input.seedId,
    parentRunId: input.parent?.runId ?? null,
    cloneKind: input.parent?.cloneKind ?? null,
    mode: 'batch',
    provider: input.agent.provider,
    model: input.agent.model,
    renderedAgentJson: input.agent,
    metadata: input.metadata ?? null,
    state: 'queued',
    queueReason: null,
    pausedReason: null,
    prRounds: null,
    prCostUsd: null,
    failureReason: null,
    createdAt: input.createdAt,
    startedAt: null,
    endedAt: null,
    commitsAhead: null,
    filesChanged: null,
    insertions: null,
    deletions: null,
    prompt: input.prompt,
    trigger: input.trigger,
    prUrl: null,
    prState: null,
    prMergedAt: null,
    targetBranch: input.targetBranch,
    ref: input.ref,
    baseCommit: input.baseCommit,
    branch: input.branch ?? null,
    salvageRef: null,
    salvagePath: null,
    costUsd: null,
    maxCostUsd: input.agent.maxCostUsd,
    tokensInput: null,
    tokensOutput: null,
    tokensCacheRead: null,
    tokensCacheWrite: null,
    previewState: null,
    previewPort: null,
    previewStartedAt: null,
    previewLastHitAt: null,
    previewFailureMessage: null,
    costBasis: 'api',
    workspacePath: input.sandbox.workspacePath,
    dispatcherHandle: input.dispatcherHandle,
    projectionVersion: 0,
  };
}
