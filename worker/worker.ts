// The worker: runs svc's workflows and activities on one task queue. Many of these, on many
// machines, against one Temporal cluster and one Postgres, is how svc scales out.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DefaultLogger, NativeConnection, Runtime, Worker, bundleWorkflowCode, type LogLevel, type WorkflowBundle } from '@temporalio/worker';
import { createActivities } from '../activities/index.ts';
import type { ReadModel } from '../db/orm.ts';

export const WORKFLOWS_ENTRY = join(dirname(fileURLToPath(import.meta.url)), '..', 'workflows', 'index.ts');

export interface WorkerSettings {
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
  dataDir: string;
  readModel: ReadModel;
  /** A prebuilt bundle (see buildWorkflowBundle); without one the worker bundles from source. */
  workflowBundlePath?: string | undefined;
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
function installRuntimeOnce(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  const level = (process.env.SVC_LOG_LEVEL?.toUpperCase() ?? 'WARN') as LogLevel;
  try {
    // Core's own (Rust) logs go through the same logger and level instead of straight to stderr.
    Runtime.install({ logger: new DefaultLogger(level), telemetryOptions: { logging: { filter: { core: level, other: 'ERROR' }, forward: {} } } });
  } catch {
    // Someone (a test helper, the SDK download path) created the runtime first: keep theirs.
  }
}

export async function startWorker(settings: WorkerSettings): Promise<RunningWorker> {
  installRuntimeOnce();
  const connection = await NativeConnection.connect({ address: settings.temporalAddress });
  const workflowBundle = settings.workflowBundlePath ? { code: readFileSync(settings.workflowBundlePath, 'utf8') } : await buildWorkflowBundle();
  const worker = await Worker.create({
    connection,
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    workflowBundle,
    activities: createActivities({ readModel: settings.readModel, dataDir: settings.dataDir }),
    // Activities that supervise agents are cheap pollers; allow many at once.
    maxConcurrentActivityTaskExecutions: 200,
    shutdownGraceTime: '10s',
  });
  const done = worker.run().finally(() => connection.close());
  return {
    worker,
    done,
    async shutdown() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await done;
    },
  };
}
