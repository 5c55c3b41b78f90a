// Building the input of one runWorkflow from a dispatch request: the same rules whether the run
// comes from POST /runs, a trigger fired by hand, or a Temporal Schedule.
import type { PreviewPlan } from './preview.ts';
import { runAdmission } from './admission-queue.ts';
import { prLoopSettings, type PrLoopSettings } from './pr-loop.ts';
import { renderAgent, type AgentDefinition } from './agents.ts';
import {
  DEFAULT_MAX_RUN_MS,
  DEFAULT_RUN_TIMING,
  type RunTiming,
  projectSandbox,
  type ProjectSandboxSettings,
  type RunWorkflowInput,
} from './run-model.ts';
import type { SvcDefaults } from './svc-config.ts';
import { durationSeconds } from './svc-config.schema.ts';

export interface RunRequest {
  runId: string;
  createdAt: number;
  agent: AgentDefinition;
  projectId: string | null;
  prompt: string;
  trigger: string;
  seedId?: string | null;
  ref?: string | null;
  baseCommit?: string | null;
  targetBranch?: string | null;
  dispatcherHandle?: string | null;
  providerOverride?: string | null;
  modelOverride?: string | null;
  /** The dispatch's own cap: wins over the agent's, which wins over the project default. */
  maxCostUsd?: number | null;
  projectMaxCostUsd?: number | null;
  /** The dispatch's own choice: wins over the project's `onCapHit`. */
  onCapHit?: 'cancel' | 'pause' | null;
  projectOnCapHit?: 'cancel' | 'pause' | null;
  triggerFire?: { projectId: string; triggerId: string } | null;
  planRun?: RunWorkflowInput['planRun'];
  /** For project runs: the project's default branch and its branch prefix (config, env, or "svc"). */
  project?:
    | (ProjectSandboxSettings & {
        defaultBranch: string;
        runBranchPrefix: string;
        preview?: PreviewPlan | null;
        /** The project's `admission.maxConcurrentRuns`. */
        maxConcurrentRuns?: number | null;
        /** The project's PR loop (ciFixer, pr.autoMerge, pr.followUps). */
        prLoop?: PrLoopSettings | null;
        /** The project's `repoContext`. */
        repoContext?: string | null;
      })
    | null;
  /** The instance's SVC_MAX_CONCURRENT_RUNS (null: none). */
  instanceMaxConcurrentRuns?: number | null;
  timing?: Partial<RunTiming>;
  parent?: RunWorkflowInput['parent'];
  metadata?: Record<string, unknown> | null;
  followUp?: RunWorkflowInput['followUp'];
}

/** What a project's `.svc/config.yaml` contributes to every run dispatched on it. */
export function projectRunSettings(
  defaults: SvcDefaults | null | undefined,
  defaultBranch: string,
  fallbackBranchPrefix: string,
): Pick<RunRequest, 'project' | 'projectMaxCostUsd' | 'projectOnCapHit'> {
  return {
    projectMaxCostUsd: defaults?.maxCostUsd ?? null,
    projectOnCapHit: defaults?.onCapHit ?? null,
    project: {
      defaultBranch,
      runBranchPrefix: defaults?.runBranchPrefix ?? fallbackBranchPrefix,
      memoryLimitMiB: defaults?.resources?.limits?.memoryMiB ?? null,
      image: defaults?.agentImage ?? null,
      cpuMillicores: defaults?.resources?.limits?.cpuMillicores ?? null,
      pod: defaults?.kubernetes ?? null,
      preview: previewPlan(defaults),
      maxConcurrentRuns: defaults?.admission?.maxConcurrentRuns ?? null,
      prLoop: prLoopSettings(defaults),
      repoContext: defaults?.repoContext ?? null,
      network:
        defaults?.resources?.network || defaults?.resources?.egress
          ? { mode: defaults.resources.network ?? 'restricted', egress: defaults.resources.egress ?? [] }
          : null,
    },
  };
}

export function sandboxFor(runId: string, workspacesRoot: string): { id: string; workspacePath: string } {
  return { id: `sbx-${runId}`, workspacePath: `${workspacesRoot.replace(/\/+$/, '')}/${runId}` };
}

export function buildRunInput(request: RunRequest, workspacesRoot: string): RunWorkflowInput {
  const agent = renderAgent(request.agent, {
    providerOverride: request.providerOverride ?? null,
    modelOverride: request.modelOverride ?? null,
    maxCostUsd: request.maxCostUsd ?? null,
  });
  if (agent.maxCostUsd === null && request.projectMaxCostUsd) agent.maxCostUsd = request.projectMaxCostUsd;
  const admission = runAdmission(request.instanceMaxConcurrentRuns ?? null, request.project?.maxConcurrentRuns ?? null);
  return {
    runId: request.runId,
    createdAt: request.createdAt,
    agent,
    projectId: request.projectId,
    prompt: request.prompt,
    trigger: request.trigger,
    seedId: request.seedId ?? null,
    ref: request.ref ?? null,
    baseCommit: request.baseCommit ?? null,
    targetBranch: request.targetBranch ?? null,
    dispatcherHandle: request.dispatcherHandle ?? null,
    sandbox: {
      ...sandboxFor(request.runId, workspacesRoot),
      ...projectSandbox(request.project ?? {}),
    },
    triggerFire: request.triggerFire ?? null,
    branch: request.project ? (request.targetBranch ?? `${request.project.runBranchPrefix}/${request.runId}`) : null,
    baseBranch: request.project ? (request.ref ?? request.project.defaultBranch) : null,
    timing: { ...DEFAULT_RUN_TIMING, maxRunMs: DEFAULT_MAX_RUN_MS, ...request.timing },
    parent: request.parent ?? null,
    ...(request.planRun ? { planRun: request.planRun } : {}),
    ...(request.metadata ? { metadata: request.metadata } : {}),
    ...(request.project?.preview ? { preview: request.project.preview } : {}),
    ...(admission ? { admission } : {}),
    ...(request.project?.prLoop && !request.followUp ? { prLoop: request.project.prLoop } : {}),
    ...(request.followUp ? { followUp: request.followUp } : {}),
    ...(request.project?.repoContext ? { repoContext: request.project.repoContext } : {}),
    // A PR loop's round is never paused: the loop waits on it, within its own budget (docs/pr-loop.md).
    ...((request.onCapHit ?? request.projectOnCapHit) === 'pause' && !request.followUp
      ? { onCapHit: 'pause' as const }
      : {}),
  };
}

const HOUR = 60 * 60_000;
const ms = (value: string | undefined, fallback: number): number =>
  value === undefined ? fallback : durationSeconds(value) * 1000;

/** The project's preview, with svc's defaults filled in (docs/previews.md). */
export function previewPlan(defaults: SvcDefaults | null | undefined): PreviewPlan | null {
  const preview = defaults?.preview;
  if (!preview) return null;
  return {
    type: preview.type,
    command: preview.command,
    setup: preview.setup ?? null,
    port: preview.port,
    readinessPath: preview.readiness_path ?? '/',
    // Bounded: the readiness probe is one activity of at most two hours.
    setupTimeoutMs: Math.min(ms(preview.setup_timeout, 10 * 60_000), HOUR),
    connectTimeoutMs: ms(preview.connect_timeout, 5 * 60_000),
    readinessTimeoutMs: Math.min(ms(preview.readiness_timeout, 10 * 60_000), HOUR),
    idleTtlMs: preview.idle_ttl ? ms(preview.idle_ttl, 0) : null,
    maxLifetimeMs: preview.max_lifetime ? ms(preview.max_lifetime, 0) : null,
  };
}
