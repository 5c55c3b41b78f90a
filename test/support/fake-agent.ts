// What a run's agent activities answer in tests that run the real runWorkflow with the agent faked
// (test/workflows/): a sandbox that started, and an agent that then exited cleanly.
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { CLEAN_EXIT } from './agent-evidence.ts';
import { suiteTemporalAddress } from './env.ts';
import { BUILTIN_AGENTS } from '../../core/agents.ts';
import { newId } from '../../core/ids.ts';
import { buildRunInput } from '../../core/run-input.ts';

/** startAgent's answer for an agent now running in its sandbox. */
export const STARTED_AGENT = {
  isolation: 'bubblewrap',
  sandbox: { isolation: 'bubblewrap' },
  costBasis: 'api' as const,
  memory: null,
  status: 'running' as const,
  sandboxRunId: 'sandbox-run-1',
  spawnedAt: '2026-11-29T00:00:01.000Z',
  endedAt: null,
  message: null,
};

/** The supervision activities of an agent that exits 0 at once, with output and nothing else to say. */
export const cleanExitSupervision = {
  async superviseAgent() {
    return { ...CLEAN_EXIT, endedAt: '2026-11-29T00:00:02.000Z', usage: null, costCap: null };
  },
  async stopAgent() {},
  async agentActivity() {
    return { lastOutputAt: Date.now() };
  },
};

/** Starts a runWorkflow of the first built-in agent, with no project, on a test worker's queue. */
export function startTrivialRun(client: Client, taskQueue: string, prompt: string, workspaceRoot: string) {
  const runId = newId('run');
  const input = buildRunInput(
    { runId, createdAt: Date.now(), agent: BUILTIN_AGENTS[0]!, projectId: null, prompt, trigger: 'api' },
    workspaceRoot,
  );
  return client.workflow.start('runWorkflow', { taskQueue, workflowId: runId, args: [input] });
}

/**
 * Runs `work` with a client while a worker of these activities (and the workflows' bundle) polls
 * `taskQueue` on the suite's Temporal server; both connections are closed after.
 */
export async function withTestWorker(
  options: { taskQueue: string; workflowBundle: { code: string } | { codePath: string }; activities: object },
  work: (client: Client) => Promise<void>,
  client?: Client,
): Promise<void> {
  const connection = await NativeConnection.connect({ address: suiteTemporalAddress() });
  const worker = await Worker.create({ connection, ...options });
  const caller = client ?? new Client({ connection: await Connection.connect({ address: suiteTemporalAddress() }) });
  try {
    await worker.runUntil(work(caller));
  } finally {
    await caller.connection.close();
    await connection.close();
  }
}
