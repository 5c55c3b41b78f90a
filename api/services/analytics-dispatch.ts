// GET /analytics/dispatch, shaped: the window's runs per origin, retry kind, provider, model and
// agent (counts and outcomes from the repository's SQL buckets), what they were dispatched with,
// and the queue now.
import type { AnalyticsRepository, AnalyticsScope, RunBucketRow } from '../../db/repositories/analytics.repository.ts';
import { RETRY_KINDS, type DispatchAnalytics, type DispatchBucket } from '../routes/analytics-dispatch.schema.ts';
import { byRuns, keyOf, ratio, terminalOf } from './analytics-buckets.ts';
import type { AnalyticsFilter } from './analytics-window.ts';

function dispatchBucket(row: RunBucketRow | undefined, key: string, windowRuns: number): DispatchBucket {
  const runs = row?.runs ?? 0;
  return {
    key,
    runs,
    share: ratio(runs, windowRuns),
    active: row?.active ?? 0,
    succeeded: row?.succeeded ?? 0,
    failed: row?.failed ?? 0,
    cancelled: row?.cancelled ?? 0,
    successRate: row ? ratio(row.succeeded, terminalOf(row)) : null,
    avgQueueWaitMs: row?.avgQueueWaitMs ?? null,
  };
}

/** The dispatch analytics of a scope; `nowMs` dates the queue's oldest wait. */
export async function dispatchAnalytics(
  rows: AnalyticsRepository,
  scope: AnalyticsScope,
  filter: AnalyticsFilter,
  nowMs: number,
): Promise<DispatchAnalytics> {
  const [totals, context, origin, retryKind, provider, model, agent, dists, queue] = await Promise.all([
    rows.totals(scope),
    rows.dispatch.context(scope),
    rows.buckets(scope, 'origin'),
    rows.buckets(scope, 'retryKind'),
    rows.buckets(scope, 'provider'),
    rows.buckets(scope, 'model'),
    rows.buckets(scope, 'agent'),
    rows.distributions(scope, ['queueWaitMs']),
    rows.dispatch.queueNow(filter.projectId),
  ]);
  const buckets = (group: RunBucketRow[]) => byRuns(group.map((row) => dispatchBucket(row, keyOf(row), totals.runs)));
  const byRetryKind = RETRY_KINDS.map((key) => ({
    ...dispatchBucket(
      retryKind.find((row) => row.key === key),
      key,
      totals.runs,
    ),
    key,
  }));
  return {
    filter,
    totals: {
      runs: totals.runs,
      active: totals.active,
      planChildren: context.planChildren,
      seeded: context.seeded,
      costCapped: context.costCapped,
      retries: totals.runs - (byRetryKind.find((bucket) => bucket.key === 'fresh')?.runs ?? 0),
    },
    byOrigin: buckets(origin),
    byRetryKind,
    byProvider: buckets(provider),
    byModel: buckets(model),
    byAgent: buckets(agent),
    queue: {
      depth: queue.queued,
      running: queue.running,
      oldestQueuedAgeMs: queue.oldestQueuedAt === null ? null : Math.max(0, nowMs - queue.oldestQueuedAt),
      waitMs: dists.queueWaitMs,
    },
  };
}
