// The events of a run's start: its sandbox started (each generation) and, the first time, the run
// running. The workflow publishes them with the run (workflows/run/start.ts).
import type { RunSnapshot } from './run-model.ts';

/** What the sandbox launch answered, as far as the events need it. */
export interface LaunchedAgent {
  /** The sandbox's own description (its backend's note), spread into the event. */
  sandbox: object | null;
  isolation: string | null;
  memory: unknown;
}

/** The sandbox.started event of a generation (`again`: '' for the first, ':g2'… after a pause). */
export function sandboxStartedEvent(
  run: Pick<RunSnapshot, 'sandboxId' | 'sandboxRunId' | 'workspacePath'>,
  launched: LaunchedAgent,
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

/** The events of the run's first start, once its agent runs (`run.startedAt`: when it was spawned). */
export function runningEvents(
  run: Pick<RunSnapshot, 'sandboxId' | 'sandboxRunId' | 'workspacePath' | 'startedAt'>,
  launched: LaunchedAgent,
  workspaceKind: string,
) {
  return [
    sandboxStartedEvent(run, launched, workspaceKind, '', run.startedAt!),
    {
      dedupeKey: 'state:running',
      kind: 'state_change' as const,
      stream: 'system' as const,
      ts: run.startedAt!,
      payload: { state: 'running' },
    },
  ];
}
