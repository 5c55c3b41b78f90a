// Activity proxies, declared once, each with a named timeout profile and an explicit retry policy.
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';

/** Read-model writes: idempotent, so they retry until they land; no accepted work is lost. */
export const readModel = proxyActivities<Pick<Activities, 'projectRun'>>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '30s' },
});

/** Workspace and sandbox start: bounded work, a few retries, then the run fails. */
export const sandboxSetup = proxyActivities<Pick<Activities, 'prepareWorkspace' | 'startAgent'>>({
  startToCloseTimeout: '10m',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 5 },
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
