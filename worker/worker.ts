// The worker: runs svc's workflows and activities on one task queue. Many of these, on many
// machines, against one Temporal cluster and one Postgres, is how svc scales out.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  bundleWorkflowCode,
  type LogLevel,
  type WorkflowBundle,
} from '@temporalio/worker';
import { Client, Connection } from '@temporalio/client';
import { createActivities } from '../activities/index.ts';
import { ensureReconcilerSchedule } from './reconciler-schedule.ts';
import type { ReadModel } from '../db/orm.ts';
import type { AgentCatalog } from '../platform/agent-catalog.ts';
import type { SvcConfig } from '../platform/config.ts';

export const WORKFLOWS_ENTRY = join(dirname(fileURLToPath(import.meta.url)), '..', 'workflows', 'index.ts');

export interface WorkerSettings {
  config: SvcConfig;
  temporalAddress: string;
  readModel: ReadModel;
  agents: AgentCatalog;
  agentApi: { baseUrl: string; operatorToken: string } | undefined;
}

export async function buildWorkflowBundle(): Promise<WorkflowBundle> {
  return bundleWorkflowCode({ workflowsPath: WORKFLOWS_ENTRY, logger: quietBundlerLogger });
}

const quietBundlerLogger = {
  log: () => {},
  trace: () => {},
  debug: () => {},
  info: () => {},
  warn: (message: string, meta?: unknown) => console.warn(message, meta ?? ''),
  error: (message: string, meta?: unknown) => console.error(message, meta ?? ''),
};

export interface RunningWorker {
  worker: Worker;
  /** Resolves when the worker has stopped (after shutdown() or a fatal error). */
  done: Promise<void>;
  shutdown(): Promise<void>;
}

let runtimeInstalled = false;

/** The SDK logs every worker state change at INFO; svc keeps WARN and up unless SVC_LOG_LEVEL says otherwise. */
function installRuntimeOnce(metricsAddress: string | undefined): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const level = (process.env.SVC_LOG_LEVEL?.toUpperCase() ?? 'WARN') as LogLevel;
  try {
    // Core's own (Rust) logs go through the same logger and level instead of straight to stderr.
    Runtime.install({
      logger: new DefaultLogger(level),
      telemetryOptions: {
        logging: { filter: { core: level, other: 'ERROR' }, forward: {} },
        // Worker slots, sticky cache, poll latency…: scraped there, or through the API's /metrics in `svc serve`.
        ...(metricsAddress ? { metrics: { prometheus: { bindAddress: metricsAddress } } } : {}),
      },
    });
  } catch {
    // Someone (a test helper, the SDK download path) created the runtime first: keep theirs.
  }
}

export async function startWorker(settings: WorkerSettings): Promise<RunningWorker> {
  const { config } = settings;
  installRuntimeOnce(config.temporalMetricsAddress);
  const connection = await NativeConnection.connect({ address: settings.temporalAddress });
  // Activities that manage Temporal Schedules need a client of their own.
  const clientConnection = await Connection.connect({ address: settings.temporalAddress });
  const temporal = new Client({ connection: clientConnection, namespace: config.temporalNamespace });
  const workflowBundle = config.workflowBundlePath
    ? { code: readFileSync(config.workflowBundlePath, 'utf8') }
    : await buildWorkflowBundle();
  const worker = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    workflowBundle,
    activities: createActivities({
      readModel: settings.readModel,
      dataDir: config.dataDir,
      projectsRoot: config.projectsRoot,
      githubToken: config.githubToken,
      temporal,
      taskQueue: config.taskQueue,
      agents: settings.agents,
      agentApi: settings.agentApi,
      runBranchPrefix: config.runBranchPrefix,
      runTiming: config.runTiming,
      githubApiUrl: config.githubApiUrl,
      sandbox: config.sandbox,
    }),
    // Activities that supervise agents are cheap pollers; allow many at once.
    maxConcurrentActivityTaskExecutions: 200,
    shutdownGraceTime: '10s',
  });
  const running = worker.run();
  // After the worker polls: the start-up pass needs a worker to run on. Without a schedule the
  // worker still works (runs end on their own); it says why, and the next start tries again.
  await ensureReconcilerSchedule(temporal, config.taskQueue, {
    intervalMs: config.reconcileIntervalMs,
    staleAfterMs: config.reconcileStaleAfterMs,
  }).catch((error: Error) => console.warn(`svc worker: the reconciler schedule could not be set up: ${error.message}`));
  const done = running.finally(async () => {
    await clientConnection.close();
    await connection.close();
  });
  return {
    worker,
    done,
    async shutdown() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
    },
  };
}
