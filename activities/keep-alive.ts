// Long activities heartbeat while they work, so a worker that dies mid-way is noticed within the
// proxy's heartbeat timeout (seconds) and the activity retried elsewhere, not after its
// start-to-close timeout (minutes). Every activity here is idempotent, so a retry is safe.
import { Context } from '@temporalio/activity';

const HEARTBEAT_EVERY_MS = 2000;

export async function withHeartbeat<T>(work: () => Promise<T>): Promise<T> {
  const context = Context.current();
  const timer = setInterval(() => context.heartbeat(), HEARTBEAT_EVERY_MS);
  context.heartbeat();
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

/**
 * The activities that may take longer than a heartbeat timeout; their proxies set one
 * (workflows/activity-proxies.ts). Every other activity of those proxies answers within seconds.
 */
export const HEARTBEATING_ACTIVITIES = [
  'prepareWorkspace',
  'prepareAndStartAgent',
  'setSandboxAside',
  'startAgent',
  'stopAgent',
  'registerProjectClone',
  'refreshProjectClone',
  'deleteProject',
  'deliverBranch',
  'measureChanges',
  'openPullRequest',
  'checkPullRequest',
  'preparePlanChild',
  'describeRun',
  'startPreview',
  'stopPreview',
  'projectWebhooks',
  'offerLifecycleEvents',
] as const;

/** The same activities, those named in HEARTBEATING_ACTIVITIES heartbeating while they work. */
export function withHeartbeats<A extends Record<string, (...args: any[]) => Promise<unknown>>>(activities: A): A {
  const wrapped: Record<string, (...args: any[]) => Promise<unknown>> = { ...activities };
  for (const name of HEARTBEATING_ACTIVITIES) {
    const activity = activities[name];
    if (activity) wrapped[name] = (...args: unknown[]) => withHeartbeat(() => activity(...args));
  }
  return wrapped as A;
}
