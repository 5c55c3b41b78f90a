// What the workflow learns of an agent's start: running (with the backend's name for the sandbox
// run), failed to spawn, failed to build its sandbox, or lost.
import { sandboxRunId, type SandboxStatus } from './local-sandbox.ts';

export function launchOutcome(status: SandboxStatus, command: string) {
  switch (status.kind) {
    case 'running':
      return {
        status: 'running' as const,
        sandboxRunId: sandboxRunId(status.supervisor, status.agent),
        spawnedAt: status.agent?.spawnedAt ?? null,
        endedAt: null,
        message: null,
      };
    case 'exited': {
      const failure = status.exit.spawnError;
      if (failure) {
        const failed = failure.code === 'SANDBOX_NETWORK' ? ('sandbox_failed' as const) : ('spawn_failed' as const);
        return {
          status: failed,
          sandboxRunId: null,
          spawnedAt: null,
          endedAt: status.exit.endedAt,
          message:
            failed === 'sandbox_failed' ? failure.message : `spawn ${command} ${failure.code}: ${failure.message}`,
        };
      }
      return {
        status: 'running' as const,
        sandboxRunId: null,
        spawnedAt: status.agent?.spawnedAt ?? status.exit.endedAt,
        endedAt: null,
        message: null,
      };
    }
    default:
      return {
        status: 'lost' as const,
        sandboxRunId: null,
        spawnedAt: null,
        endedAt: null,
        message: status.kind === 'lost' ? status.reason : 'sandbox did not start',
      };
  }
}
