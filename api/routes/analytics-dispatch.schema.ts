// The response schema of GET /analytics/dispatch: how the window's runs were dispatched (what
// started them, whether as a retry or clone, to which agent, provider and model) and the queue.
// It validates nothing on the way in (the query is the analytics window) and documents the API.
import { z } from 'zod';
import { analyticsFilter, count, distribution, rate } from './analytics.schema.ts';

/**
 * How a run came to be: a fresh dispatch, a clone of an earlier run (`continue` from its pushed
 * branch, `replicate` its input), or a plan-run child dispatched again after a provider error.
 */
export const RETRY_KINDS = ['fresh', 'continue', 'replicate', 'plan_retry'] as const;

const dispatchBucket = z.object({
  key: z.string().describe('"__none__" for runs without a value'),
  runs: count,
  share: rate.describe("runs / the window's runs"),
  active: count.describe('Queued or running now'),
  succeeded: count,
  failed: count,
  cancelled: count,
  successRate: rate.describe('succeeded / (succeeded + failed + cancelled)'),
  avgQueueWaitMs: z.number().nullable().describe('Created to started, over the runs that started'),
});
export type DispatchBucket = z.infer<typeof dispatchBucket>;

export const dispatchAnalyticsResponse = z.object({
  filter: analyticsFilter,
  totals: z.object({
    runs: count.describe('Runs created in the window'),
    active: count.describe('Of those, queued or running now'),
    planChildren: count.describe('Runs a plan-run dispatched as one of its children'),
    seeded: count.describe('Runs linked to a seed (an issue of the project tracker)'),
    costCapped: count.describe('Runs dispatched with a cost cap (maxCostUsd)'),
    retries: count.describe('Runs that are not fresh dispatches (see byRetryKind)'),
  }),
  byOrigin: z
    .array(dispatchBucket)
    .describe(
      "By the run's trigger: manual, cli, plan-run, cron, webhook… or the label a POST /runs gave " +
        '(legacy manual-trigger counts as manual); most runs first',
    ),
  byRetryKind: z
    .array(dispatchBucket.extend({ key: z.enum(RETRY_KINDS) }))
    .describe(
      'Every kind, in this order: fresh; continue and replicate (clones of an earlier run, cloneKind); ' +
        'plan_retry (a plan-run child dispatched again after a provider error)',
    ),
  byProvider: z.array(dispatchBucket).describe('Most runs first'),
  byModel: z.array(dispatchBucket).describe('Most runs first'),
  byAgent: z.array(dispatchBucket).describe('Most runs first'),
  queue: z
    .object({
      depth: count.describe('Runs queued now, whenever created (of the project when projectId is given)'),
      running: count.describe('Runs running now, whenever created'),
      oldestQueuedAgeMs: z
        .number()
        .nullable()
        .describe('How long the oldest queued run has waited so far; null when nothing is queued'),
      waitMs: distribution.describe("Created to started, over the window's runs that started"),
    })
    .describe('The queue now (depth, running, oldest) and the wait of the window'),
});
export type DispatchAnalytics = z.infer<typeof dispatchAnalyticsResponse>;
