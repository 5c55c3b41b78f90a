// The I/O of a run before its agent starts: the read-model projection and the workspace.
import { existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import type { ReadModel } from '../db/orm.ts';
import { writeRunProjection, type RunProjection } from './read-model/write-run-projection.ts';
import type { SandboxSettings } from '../platform/sandbox-settings.ts';
import type { DiskFloor } from '../platform/disk-space.ts';
import type { ForgeCredentials } from '../platform/forge-credentials.ts';
import type { SecretsKeys } from '../platform/secrets-key.ts';
import { sandboxFiles, inspectSandbox, stopSandbox, supervisorHolds } from '../sandbox/index.ts';
import { dataPaths } from '../platform/config.ts';
import { prepareRunWorkspace, type PrepareWorkspaceInput } from './workspace/prepare-workspace.ts';

export interface RunActivityDeps {
  readModel: ReadModel;
  dataDir: string;
  projectsRoot: string;
  /** svc's forge token for each repository: the PAT, or an installation token for that repository alone. */
  forgeCredentials: ForgeCredentials;
  /** Where the agent reaches svc, and the operator token its per-run token is derived from. */
  agentApi?: { baseUrl: string; operatorToken: string } | undefined;
  sandbox: SandboxSettings;
  /** What project secrets are sealed with: a run's agent gets its project's (platform/secrets-key.ts). */
  secretsKeys: SecretsKeys;
  /** The free space this worker's data directory keeps (SVC_DISK_MIN_FREE_*): below it, no run starts. */
  diskFloor?: DiskFloor;
  githubApiUrl: string;
  /** How often a supervising activity looks at its sandbox. */
  pollIntervalMs?: number;
  /** A run's output kept as events at most (SVC_RUN_OUTPUT_MAX_MIB); past it, lines are dropped. */
  runOutputMaxBytes?: number | null;
}

export function createRunActivities(deps: RunActivityDeps) {
  return {
    async projectRun(projection: RunProjection): Promise<void> {
      await writeRunProjection(deps.readModel, projection);
    },

    /** The run's workspace (activities/workspace/prepare-workspace.ts). Idempotent. */
    async prepareWorkspace(input: PrepareWorkspaceInput) {
      return prepareRunWorkspace(deps, input);
    },

    /**
     * A run resumed after a pause (workflows/run/pause.ts) starts its agent in a fresh sandbox: the
     * ended one's records and output are moved aside (`<runId>.g<generation>`), the workspace stays.
     * Idempotent; an agent still there is stopped first.
     */
    async setSandboxAside({ runId, generation }: { runId: string; generation: number }): Promise<void> {
      const dir = join(dataPaths.sandboxes(deps.dataDir), runId);
      const aside = `${dir}.g${generation}`;
      if (!existsSync(dir) || existsSync(aside)) return;
      const files = sandboxFiles(dir);
      // Moved only once nothing of the ended sandbox writes there any more: agent and supervisor gone.
      const busy = () => inspectSandbox(files).kind === 'running' || supervisorHolds(files);
      for (let waited = 0; busy(); waited += 200) {
        if (waited === 0) stopSandbox(files);
        if (waited > 60_000) throw new Error(`the sandbox of run ${runId} did not stop`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      renameSync(dir, aside);
    },
  };
}

export type RunActivities = ReturnType<typeof createRunActivities>;
