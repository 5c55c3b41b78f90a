// The I/O that watches or stops a run's agent from outside its supervision: when it last wrote
// anything (the silence watchdog's look) and stopping it (cancel, watchdogs).
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { dataPaths } from '../platform/config.ts';
import type { RunActivityDeps } from './run-activities.ts';
import { readJsonIfExists, sandboxFiles, inspectSandbox, stopSandbox } from '../sandbox/index.ts';

const STOP_WAIT_MS = 15_000;

export function createAgentControlActivities(deps: Pick<RunActivityDeps, 'dataDir'>) {
  const sandboxDir = (runId: string) => join(dataPaths.sandboxes(deps.dataDir), runId);
  return {
    /** When the agent last wrote anything (its output files' modification time). */
    async agentActivity({ runId }: { runId: string }): Promise<{ lastOutputAt: number }> {
      const files = sandboxFiles(sandboxDir(runId));
      const agent = readJsonIfExists<{ spawnedAt: string }>(files.agent);
      const times = [files.stdout, files.stderr].map((path) => (existsSync(path) ? statSync(path).mtimeMs : 0));
      return { lastOutputAt: Math.max(...times, agent ? Date.parse(agent.spawnedAt) : 0) };
    },

    /** Stops the agent (SIGTERM to its process group, SIGKILL after 5 s) and waits until it has gone. */
    async stopAgent({ runId }: { runId: string }): Promise<{ stopped: boolean }> {
      const files = sandboxFiles(sandboxDir(runId));
      stopSandbox(files);
      const deadline = Date.now() + STOP_WAIT_MS;
      while (Date.now() < deadline) {
        const status = inspectSandbox(files);
        if (status.kind === 'exited' || status.kind === 'lost') return { stopped: true };
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return { stopped: false };
    },
  };
}
