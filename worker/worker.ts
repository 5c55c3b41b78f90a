// The worker: runs svc's workflows and activities on one task queue. Many of these, on many
// machines, against one Temporal cluster and one Postgres, is how svc scales out.
import { readFileSync } from 'node:fs';
import { NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { Client, Connection } from '@temporalio/client';
import { createActivities } from '../activities/index.ts';
import { createDataDirActivities } from '../activities/data-dir-activities.ts';
import { ensureReconcilerSchedule } from './reconciler-schedule.ts';
import { ensureRetentionSchedule } from './retention-schedule.ts';
import { dataDirKey, dataDirTaskQueue } from '../platform/data-dir-key.ts';
import { syncConfiguredWebhooks } from './configured-webhooks.ts';
import type { ReadModel } from '../db/orm.ts';
import type { SecretsKeys } from '../platform/secrets-key.ts';
import type { AgentCatalog } from '../platform/agent-catalog.ts';
import { dataPaths, type SvcConfig } from '../platform/config.ts';
import { prepareSupervisorProgram, pruneStalePrograms } from '../sandbox/index.ts';
import { ForgeCredentials } from '../platform/forge-credentials.ts';
import { logger, type LogLevelName } from '../platform/logger.ts';
import { sdkLogger, sdkLogLevel } from './sdk-logging.ts';
import { buildWorkflowBundleApart } from './workflow-bundle.ts';

export interface WorkerSettings {
  config: SvcConfig;
  temporalAddress: string;
  readModel: ReadModel;
  /** What project secrets are sealed with (platform/secrets-key.ts). */
  secretsKeys: SecretsKeys;
  agents: AgentCatalog;
  agentApi: { baseUrl: string; operatorToken: string } | undefined;
  /** Webhook secrets derive from it. */
  operatorToken: string;
}

export interface RunningWorker {
  worker: Worker;
  /** Resolves when the worker has stopped (after shutdown() or a fatal error). */
  done: Promise<void>;
  shutdown(): Promise<void>;
}

let runtimeInstalled = false;

/** The SDK's logs join svc's structured log, at SVC_LOG_LEVEL; its metrics are served when asked. */
function installRuntimeOnce(metricsAddress: string | undefined, logLevel: LogLevelName): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const level = sdkLogLevel(logLevel);
  try {
    // Core's own (Rust) logs go through the same logger and level instead of straight to stderr.
    Runtime.install({
      logger: sdkLogger(logLevel),
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
  installRuntimeOnce(config.temporalMetricsAddress, config.logLevel);
  const connection = await NativeConnection.connect({ address: settings.temporalAddress });
  // Activities that manage Temporal Schedules need a client of their own.
  const clientConnection = await Connection.connect({ address: settings.temporalAddress });
  const temporal = new Client({ connection: clientConnection, namespace: config.temporalNamespace });
  // Every run's supervisor starts from plain JavaScript (sandbox/host/supervisor-program.ts).
  pruneStalePrograms(dataPaths.programs(config.dataDir));
  prepareSupervisorProgram(dataPaths.programs(config.dataDir), { shared: config.sandbox.supervisor === 'shared' });
  const workflowBundle = config.workflowBundlePath
    ? { code: readFileSync(config.workflowBundlePath, 'utf8') }
    : await buildWorkflowBundleApart(dataPaths.programs(config.dataDir));
  const worker = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    workflowBundle,
    activities: createActivities({
      readModel: settings.readModel,
      secretsKeys: settings.secretsKeys,
      dataDir: config.dataDir,
      projectsRoot: config.projectsRoot,
      forgeCredentials: ForgeCredentials.fromConfig(config),
      temporal,
      taskQueue: config.taskQueue,
      agents: settings.agents,
      agentApi: settings.agentApi,
      runBranchPrefix: config.runBranchPrefix,
      maxConcurrentRuns: config.maxConcurrentRuns,
      diskFloor: config.diskFloor,
      operatorToken: settings.operatorToken,
      webhooks: config.webhooks,
      runTiming: config.runTiming,
      runOutputMaxBytes: config.runOutputMaxBytes,
      githubApiUrl: config.githubApiUrl,
      sandbox: config.sandbox,
      preview: config.preview,
    }),
    // Bounded, so a worker's memory stays flat however many runs it has seen (docs/operations.md).
    maxCachedWorkflows: config.workerCapacity.maxCachedWorkflows,
    maxConcurrentActivityTaskExecutions: config.workerCapacity.maxConcurrentActivities,
    maxConcurrentWorkflowTaskExecutions: config.workerCapacity.maxConcurrentWorkflowTasks,
    shutdownGraceTime: '10s',
  });
  // A second worker, on this data directory's own queue: the work that must run where its files are.
  const key = dataDirKey(config.dataDir);
  const dataDirQueue = dataDirTaskQueue(config.taskQueue, key);
  const dataDirWorker = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: dataDirQueue,
    activities: createDataDirActivities({
      readModel: settings.readModel,
      dataDir: config.dataDir,
      retention: config.retention,
    }),
    maxConcurrentActivityTaskExecutions: 2,
    shutdownGraceTime: '10s',
  });
  const running = Promise.all([worker.run(), dataDirWorker.run()]).then(() => undefined);
  // After the worker polls: the start-up pass needs a worker to run on. Without a schedule the
  // worker still works (runs end on their own); it says why, and the next start tries again.
  await ensureReconcilerSchedule(temporal, config.taskQueue, {
    intervalMs: config.reconcileIntervalMs,
    staleAfterMs: config.reconcileStaleAfterMs,
  }).catch((error: Error) =>
    logger({ component: 'worker' }).warn({ error: error.message }, 'the reconciler schedule could not be set up'),
  );
  await ensureRetentionSchedule(temporal, {
    taskQueue: config.taskQueue,
    dataDirKey: key,
    dataDirQueue,
    intervalMs: config.retention.intervalMs,
  }).catch((error: Error) =>
    logger({ component: 'worker' }).warn({ error: error.message }, 'the retention schedule could not be set up'),
  );
  // Not awaited: the worker serves while the registry takes the configured set (SVC_WEBHOOKS).
  const { configured } = config.webhooks;
  if (configured)
    void syncConfiguredWebhooks(temporal, config.taskQueue, configured).catch((error: Error) =>
      logger({ component: 'worker' }).warn({ error: error.message }, 'SVC_WEBHOOKS could not be registered'),
    );
  const done = running.finally(async () => {
    await clientConnection.close();
    await connection.close();
  });
  return {
    worker,
    done,
    async shutdown() {
      for (const each of [worker, dataDirWorker]) if (each.getState() === 'RUNNING') each.shutdown();
      await done;
    },
  };
}
