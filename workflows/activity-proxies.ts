// Activity proxies, declared once, each with a named timeout profile and an explicit retry policy.
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import type { DataDirActivities } from '../activities/data-dir-activities.ts';

/**
 * How soon a dead worker is noticed in an activity that heartbeats (activities/keep-alive.ts names
 * them): its retry starts on another worker within seconds, not after its start-to-close timeout.
 */
const HEARTBEAT_TIMEOUT = '10s';

/**
 * Read-model writes: short and idempotent, so they run as local activities (no server round trip
 * between the workflow and its projection, which keeps dispatch fast) and retry until they land.
 */
export const readModel = proxyLocalActivities<Pick<Activities, 'projectRun'>>({
  startToCloseTimeout: '30s',
  localRetryThreshold: '10s',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '30s' },
});

/** Workspace and sandbox start: bounded work, a few retries, then the run fails. */
export const sandboxSetup = proxyActivities<
  Pick<Activities, 'prepareWorkspace' | 'startAgent' | 'stopAgent' | 'agentActivity' | 'setSandboxAside'>
>({
  startToCloseTimeout: '10m',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 5 },
});

/**
 * The workspace cut and the sandbox start in one activity (activities/start-activities.ts): the
 * time of the two it replaces (a large clone, then a pod that waits for a node), the same retries.
 */
export const workspaceAndStart = proxyActivities<Pick<Activities, 'prepareAndStartAgent'>>({
  startToCloseTimeout: '20m',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 5 },
});

/** An environment's setup: its start (a spawn, as the agent's) and its stop; its services' start and removal. */
export const environmentSetup = proxyActivities<
  Pick<
    Activities,
    | 'startEnvironmentSetup'
    | 'stopEnvironmentSetup'
    | 'useEnvironmentCache'
    | 'mountEnvironment'
    | 'startEnvironmentServices'
    | 'removeEnvironmentServices'
  >
>({
  startToCloseTimeout: '2m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 5 },
});

/** A shared environment build's steps (workflows/environment-build.workflow.ts): a checkout, a spawn, a keep. */
export const environmentBuild = proxyActivities<
  Pick<Activities, 'prepareEnvironmentBuild' | 'startEnvironmentBuildSetup' | 'endEnvironmentBuild'>
>({
  startToCloseTimeout: '20m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 5 },
});

/**
 * Watching an environment's setup until it ends (its timeout is 2 h at most: core/environment.ts),
 * kept alive by heartbeats; a retry on another worker goes on watching the same setup.
 */
export const environmentWatch = proxyActivities<
  Pick<Activities, 'awaitEnvironmentSetup' | 'followEnvironmentBuild' | 'awaitEnvironmentServices'>
>({
  startToCloseTimeout: '3h',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s' },
});

/**
 * Watching a live agent: as long as the agent runs, kept alive by heartbeats. A worker that dies
 * stops heartbeating; after the heartbeat timeout Temporal retries the activity on another worker,
 * which reattaches to the same agent process.
 */
export const supervision = proxyActivities<Pick<Activities, 'superviseAgent'>>({
  startToCloseTimeout: '7d',
  heartbeatTimeout: '10s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s' },
});

/** Git work on a project clone: a clone can take a while; failures that retrying cannot fix are non-retryable. */
export const projectGit = proxyActivities<
  Pick<Activities, 'registerProjectClone' | 'refreshProjectClone' | 'deleteProject'>
>({
  startToCloseTimeout: '15m',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 3 },
});

/** Schedules and trigger resolution: quick calls to Temporal and the read model. */
export const projectSetup = proxyActivities<Pick<Activities, 'syncProjectTriggers' | 'prepareTriggerRun'>>({
  startToCloseTimeout: '1m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 5 },
});

/**
 * Starting the sandbox's finalizer is a spawn: seconds at most. A short limit means a worker that
 * dies mid-spawn is retried on another within seconds, not after the tail's five minutes.
 */
export const finalizerStart = proxyActivities<Pick<Activities, 'startSandboxFinalizer'>>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: 6 },
});

/** A run's tail: svc's push of the handed-over branch (with its change summary and salvage) and the pull request. */
export const finalizeIo = proxyActivities<
  Pick<Activities, 'deliverBranch' | 'measureChanges' | 'salvageWorkspace' | 'openPullRequest' | 'checkPullRequest'>
>({
  startToCloseTimeout: '5m',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 4 },
});

/** The plan-run's projection: like a run's, local and retried until it lands. */
export const planReadModel = proxyLocalActivities<Pick<Activities, 'projectPlanRun'>>({
  startToCloseTimeout: '30s',
  localRetryThreshold: '10s',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '30s' },
});

/** Picking up a child (a clone refresh and a seed read) and looking at a child run. */
export const planSetup = proxyActivities<Pick<Activities, 'preparePlanChild' | 'describeRun'>>({
  startToCloseTimeout: '15m',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 5 },
});

/** Housekeeping (the reconciler): a pass may take a while, so it heartbeats; a few attempts. */
export const maintenance = proxyActivities<Pick<Activities, 'reconcileReadModel'>>({
  startToCloseTimeout: '10m',
  heartbeatTimeout: '30s',
  retry: { initialInterval: '5s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 3 },
});

/** A preview's start (a spawn and a port), its readiness probe (up to its timeouts) and its stop. */
export const previewIo = proxyActivities<
  Pick<Activities, 'makeRoomForPreview' | 'startPreview' | 'awaitPreviewReady' | 'stopPreview'>
>({
  // The probe's connect and readiness timeouts are an hour each at most (core/run-input.ts).
  startToCloseTimeout: '135m',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 5 },
});

/** Watching a live preview: as long as it lives (its eviction limits), kept alive by heartbeats. */
export const previewWatch = proxyActivities<Pick<Activities, 'watchPreview'>>({
  startToCloseTimeout: '30d',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '10s' },
});

/** The admission queue's calls: a signal-with-start and a few describes; retried until they land. */
export const admissionIo = proxyActivities<Pick<Activities, 'requestAdmission' | 'closedRuns'>>({
  startToCloseTimeout: '1m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
});

/** The cluster's pending pods for admission at the door (pendingPodsWorkflow): one try, the API waits. */
export const capacityIo = proxyActivities<Pick<Activities, 'countPendingPods'>>({
  startToCloseTimeout: '15s',
  retry: { maximumAttempts: 1 },
});

/**
 * A cancelled run asks for its own workflow's cancellation (workflows/run/run.workflow.ts), and the PR loop
 * reads a stopped round's outcome from its memo: retried until they land.
 */
export const runWorkflowControl = proxyActivities<Pick<Activities, 'requestRunWorkflowCancel' | 'cancelledRunOutcome'>>(
  {
    startToCloseTimeout: '1m',
    retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
  },
);

/**
 * Webhooks: the registry's projection, the outbox read, one delivery attempt (its HTTP failures are
 * its answer, not an error: the delivery workflow spaces its attempts with durable timers).
 */
export const webhookIo = proxyActivities<Pick<Activities, 'projectWebhooks' | 'offerLifecycleEvents'>>({
  startToCloseTimeout: '5m',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
});

/**
 * One delivery attempt (its POST bounded to 30 s): retried a few times only when svc itself failed
 * (its database), so a receiver is never POSTed an unbounded number of times for one attempt.
 */
export const webhookAttempt = proxyActivities<Pick<Activities, 'deliverWebhook'>>({
  startToCloseTimeout: '1m',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 3 },
});

/** The PR loop's forge calls and its rounds' inputs and reports: quick, a few retries (the loop looks again later). */
export const prLoopIo = proxyActivities<
  Pick<
    Activities,
    'pullRequestStatus' | 'mergePullRequest' | 'commentOnPullRequest' | 'prepareFollowUp' | 'reportFollowUp'
  >
>({
  startToCloseTimeout: '2m',
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 4 },
});

/** A run's diff (runDiffWorkflow): reads only, bounded; one retry, then the API answers 503. */
export const diffIo = proxyActivities<Pick<Activities, 'computeRunDiff'>>({
  startToCloseTimeout: '3m',
  retry: { initialInterval: '1s', maximumAttempts: 2, nonRetryableErrorTypes: ['diff_unavailable'] },
});

/**
 * A data directory's own maintenance, on its workers' task queue (`<task queue>@<key>`): a pass that
 * heartbeats as it removes. A queue no worker serves any more (a retired host) fails the pass after
 * an hour rather than holding it open.
 */
export const dataDirMaintenance = (taskQueue: string) =>
  proxyActivities<DataDirActivities>({
    taskQueue,
    scheduleToStartTimeout: '1h',
    startToCloseTimeout: '2h',
    heartbeatTimeout: '1m',
    retry: { initialInterval: '10s', backoffCoefficient: 2, maximumInterval: '5m', maximumAttempts: 3 },
  });
