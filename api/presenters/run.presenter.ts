// Run → the API's Run JSON (core/run-schema.ts): exactly its fields, timestamps as ISO-8601 UTC strings,
// createdAt as epoch milliseconds. Accepts a read-model row or a workflow snapshot.
import type { Run } from '../../db/entities/index.ts';
import type { RunSnapshot } from '../../core/run-model.ts';
import type { RunJson } from '../../core/run-schema.ts';
import type { Links } from './links.ts';

type Timestamp = Date | string | null | undefined;

export const iso = (value: Timestamp): string | null =>
  value === null || value === undefined ? null : (value instanceof Date ? value : new Date(value)).toISOString();

/** What presenting a run reads: a row (whole, or a page's ListedRun) or a workflow snapshot. */
type PresentableRun = Pick<Run, keyof RunJson & keyof Run> | RunSnapshot;

export function presentRun(run: PresentableRun): RunJson {
  return {
    id: run.id,
    agentName: run.agentName,
    projectId: run.projectId ?? null,
    sandboxId: run.sandboxId ?? null,
    sandboxRunId: run.sandboxRunId ?? null,
    seedId: run.seedId ?? null,
    parentRunId: run.parentRunId ?? null,
    cloneKind: run.cloneKind ?? null,
    mode: 'batch',
    provider: run.provider ?? null,
    model: run.model ?? null,
    renderedAgentJson: run.renderedAgentJson ?? null,
    metadata: run.metadata ?? null,
    state: run.state,
    failureReason: run.failureReason ?? null,
    createdAt: Number(run.createdAt),
    startedAt: iso(run.startedAt),
    endedAt: iso(run.endedAt),
    commitsAhead: run.commitsAhead ?? null,
    filesChanged: run.filesChanged ?? null,
    insertions: run.insertions ?? null,
    deletions: run.deletions ?? null,
    prompt: run.prompt,
    trigger: run.trigger,
    prUrl: run.prUrl ?? null,
    prState: run.prState ?? null,
    prMergedAt: iso(run.prMergedAt),
    targetBranch: run.targetBranch ?? null,
    ref: run.ref ?? null,
    salvageRef: run.salvageRef ?? null,
    salvagePath: run.salvagePath ?? null,
    // A double column may come back as a string from some drivers.
    costUsd: run.costUsd === null || run.costUsd === undefined ? null : Number(run.costUsd),
    tokensInput: run.tokensInput ?? null,
    tokensOutput: run.tokensOutput ?? null,
    tokensCacheRead: run.tokensCacheRead ?? null,
    tokensCacheWrite: run.tokensCacheWrite ?? null,
    previewState: run.previewState ?? null,
    previewPort: run.previewPort ?? null,
    previewStartedAt: iso(run.previewStartedAt),
    previewLastHitAt: iso(run.previewLastHitAt),
    previewFailureMessage: run.previewFailureMessage ?? null,
    costBasis: run.costBasis,
    queueReason: run.queueReason ?? null,
    pausedReason: run.pausedReason ?? null,
    prRounds: run.prRounds ?? null,
    prCostUsd: run.prCostUsd === null || run.prCostUsd === undefined ? null : Number(run.prCostUsd),
  };
}

export type { RunJson };

/** The answer to a dispatch (POST /runs, a trigger run): the run, its sandbox, and where to watch it. */
export function presentDispatch(run: Run | RunSnapshot, sandbox: { id: string; workspacePath: string }, links: Links) {
  return { run: presentRun(run), sandbox: { id: sandbox.id, workspacePath: sandbox.workspacePath }, links };
}
