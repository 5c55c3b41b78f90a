// What a run's read model says once its agent is running: the snapshot and the events of that
// transition. Pure, so the workflow (which holds the run) and the startAgent activity (which writes
// it, workflows/run-start.ts says when) compute it the same way, in one place.
import type { RunSnapshot } from './run-model.ts';

/** The run as the workflow hands it to the start activity: the activity's own input holds the rest. */
export type ProjectedRun = Omit<RunSnapshot, 'prompt' | 'renderedAgentJson'>;

/** What the sandbox launch answered, as far as the projection needs it. */
export interface LaunchedAgent {
  sandboxRunId: string | null;
  costBasis: RunSnapshot['costBasis'];
  /** When the agent was spawned (ISO-8601); the caller fills it in when the sandbox did not say. */
  spawnedAt: string;
  /** The sandbox's own description (its backend's note), spread into the event. */
  sandbox: object | null;
  isolation: string | null;
  memory: unknown;
}

/** The sandbox.started event of a generation (`again`: '' for the first, ':g2'… after a pause). */
export function sandboxStartedEvent(
  run: Pick<RunSnapshot, 'sandboxId' | 'sandboxRunId' | 'workspacePath'>,
  launched: Pick<LaunchedAgent, 'sandbox' | 'isolation' | 'memory'>,
  workspaceKind: string,
  again: string,
  ts: string,
) {
  return {
    dedupeKey: `sandbox:started${again}`,
    kind: 'sandbox.started' as const,
    stream: 'system' as const,
    ts,
    payload: {
      ...(launched.sandbox ?? {}),
      sandboxId: run.sandboxId,
      sandboxRunId: run.sandboxRunId,
      workspacePath: run.workspacePath,
      isolation: launched.isolation,
      memory: launched.memory ?? null,
      workspace: workspaceKind,
    },
  };
}

/**
 * The run as it is once its (first) agent runs: `base` is the snapshot before the start, with the
 * projection version the start takes already counted in.
 */
export function runningRun(base: RunSnapshot, launched: LaunchedAgent, workspaceKind: string) {
  const snapshot: RunSnapshot = {
    ...base,
    sandboxRunId: launched.sandboxRunId,
    costBasis: launched.costBasis,
    state: 'running',
    startedAt: launched.spawnedAt,
  };
  const events = [
    sandboxStartedEvent(snapshot, launched, workspaceKind, '', snapshot.startedAt!),
    {
      dedupeKey: 'state:running',
      kind: 'state_change' as const,
      stream: 'system' as const,
      ts: snapshot.startedAt!,
      payload: { state: 'running' },
    },
  ];
  return { snapshot, events };
}
