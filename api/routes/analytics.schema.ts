// Request and response schemas of the analytics routes: they validate requests and document the API.
// GET /analytics/runs answers one of two shapes: the operator's, and the spectators' copy without
// any USD figure (the document lists both, so it stays true for either caller).
import { z } from 'zod';
import { FIELD_LIMITS } from '../../core/field-limits.ts';

/** An ISO date (2026-11-22) or datetime (2026-11-22T10:00, seconds, fraction and zone optional). */
export const ISO_DATE_OR_DATETIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?$/;

const instant = z
  .string()
  .regex(ISO_DATE_OR_DATETIME, 'must be an ISO date (2026-11-22) or datetime (2026-11-22T10:00:00Z)');

export const analyticsQuery = z
  .object({
    from: instant
      .optional()
      .describe('Start of the window, by run creation (default: `to` − 30 days; at most 90 days before `to`)'),
    to: instant
      .optional()
      .describe('End of the window, included (default: now); a date covers its whole UTC day, a zoneless time is UTC'),
    projectId: z.string().min(1).max(FIELD_LIMITS.idParam).optional(),
  })
  .strict();
export type AnalyticsQuery = z.infer<typeof analyticsQuery>;

export const count = z.number().int().min(0);
/** A share in [0, 1], or null when nothing was counted. */
export const rate = z.number().min(0).max(1).nullable();

export const analyticsFilter = z.object({
  projectId: z.string().nullable(),
  from: z.string().describe('The window as applied (after defaults and the 90-day cap), ISO datetime'),
  to: z.string(),
});

export const distribution = z
  .object({ avg: z.number().nullable(), median: z.number().nullable(), p95: z.number().nullable(), count })
  .describe('Nearest-rank percentiles; null statistics when count is 0');
export type Distribution = z.infer<typeof distribution>;

export const tokenBreakdown = z.object({
  input: count,
  output: count,
  cacheRead: count,
  cacheWrite: count,
  total: count,
});

// ---- /analytics/cost -------------------------------------------------------------------------

const costBucket = z.object({
  key: z.string().describe('"__none__" for runs without a value'),
  costUsd: z.number(),
  runs: count,
  priced: count,
});
export type CostBucket = z.infer<typeof costBucket>;

export const COST_BASIS_KEYS = ['api', 'subscription_estimate', 'unpriced'] as const;

export const costAnalyticsResponse = z.object({
  filter: analyticsFilter,
  totals: z.object({ runs: count, priced: count, costUsd: z.number() }),
  breakdowns: z.object({
    date: z.array(costBucket).describe('UTC days (YYYY-MM-DD) with runs, oldest first'),
    project: z.array(costBucket),
    plan: z.array(costBucket).describe('By plan-run id; "__none__" for runs outside plan-runs'),
    run: z.array(costBucket).describe('The 50 costliest priced runs'),
    agent: z.array(costBucket),
    model: z.array(costBucket),
    provider: z.array(costBucket),
  }),
  byCostBasis: z.array(z.object({ key: z.enum(COST_BASIS_KEYS), runs: count, costUsd: z.number() })),
  pullRequests: z
    .object({
      prs: count.describe('PRs svc answered with follow-up rounds (by the run that opened them)'),
      rounds: count,
      costUsd: z.number().describe("Their total cost: each opening run's and its rounds'"),
      costliest: z
        .array(z.object({ key: z.string().describe('The run that opened the PR'), costUsd: z.number(), rounds: count }))
        .describe('The 50 costliest of those PRs'),
    })
    .describe("svc's own: the PR loop's spend (docs/pr-loop.md)"),
});
export type CostAnalytics = z.infer<typeof costAnalyticsResponse>;

// ---- /analytics/runs -------------------------------------------------------------------------

const publicGroupBucket = z.object({
  key: z.string(),
  runs: count,
  succeeded: count,
  failed: count,
  cancelled: count,
  successRate: rate.describe('succeeded / (succeeded + failed + cancelled)'),
  prStateKnown: count,
  prsMerged: count,
  mergedPrRate: rate.describe('prsMerged / prStateKnown'),
  tokens: tokenBreakdown,
  avgDurationMs: z.number().nullable(),
});
const groupBucket = publicGroupBucket.extend({ costUsd: z.number(), priced: count });
export type GroupBucket = z.infer<typeof groupBucket>;

const publicTotals = z.object({
  runs: count,
  succeeded: count,
  failed: count,
  cancelled: count,
  active: count,
  successRate: rate,
  prStateKnown: count,
  prsMerged: count,
  mergedPrRate: rate,
  durationMs: distribution.describe('Started to ended'),
  queueWaitMs: distribution.describe('Created to started'),
  tokens: tokenBreakdown,
});
const totals = publicTotals.extend({
  costUsd: distribution.describe('Over the priced runs'),
  cost: z.object({ total: z.number(), avg: z.number().nullable(), priced: count }),
});

const timeSeriesDay = z.object({
  key: z.string().describe('UTC day, YYYY-MM-DD'),
  runs: count,
  succeeded: count,
  failed: count,
  cancelled: count,
  active: count,
});

export const steeringSide = z.object({
  runs: count,
  terminal: count,
  succeeded: count,
  successRate: rate,
  prStateKnown: count,
  prsMerged: count,
  mergedPrRate: rate,
});
export type SteeringSide = z.infer<typeof steeringSide>;

const costPerMergedPr = z.object({
  costUsd: z.number().describe('Spend of every run of the group, landed or not'),
  priced: count,
  prStateKnown: count,
  prsMerged: count,
  costPerMergedPrUsd: z.number().nullable().describe('costUsd / prsMerged; null when nothing merged'),
});
export type CostPerMergedPr = z.infer<typeof costPerMergedPr>;
const keyedCostPerMergedPr = costPerMergedPr.extend({ key: z.string() });
export type KeyedCostPerMergedPr = z.infer<typeof keyedCostPerMergedPr>;

const publicOutcomes = z.object({
  timeToMergeMs: distribution.describe("From the run's end to its PR's merge"),
  steering: z
    .object({ steered: steeringSide, unsteered: steeringSide })
    .describe('Steered: at least one inbox message was sent to the run'),
});
const outcomes = publicOutcomes.extend({
  costPerMergedPr: z.object({
    overall: costPerMergedPr,
    byAgent: z.array(keyedCostPerMergedPr),
    byModel: z.array(keyedCostPerMergedPr),
    byProvider: z.array(keyedCostPerMergedPr),
    byProject: z.array(keyedCostPerMergedPr),
  }),
});

export const spectatorRunAnalyticsSchema = z.object({
  filter: analyticsFilter,
  totals: publicTotals,
  timeSeries: z.array(timeSeriesDay).describe('UTC days with runs, oldest first'),
  byAgent: z.array(publicGroupBucket),
  byModel: z.array(publicGroupBucket),
  byProvider: z.array(publicGroupBucket),
  byFailureReason: z.array(z.object({ key: z.string(), runs: count })).describe('Failed runs per reason'),
  outcomes: publicOutcomes,
});
export type SpectatorRunAnalytics = z.infer<typeof spectatorRunAnalyticsSchema>;

export const runAnalyticsSchema = spectatorRunAnalyticsSchema.extend({
  totals,
  byAgent: z.array(groupBucket),
  byModel: z.array(groupBucket),
  byProvider: z.array(groupBucket),
  outcomes,
});
export type RunAnalytics = z.infer<typeof runAnalyticsSchema>;

export const runAnalyticsResponse = z
  .union([runAnalyticsSchema, spectatorRunAnalyticsSchema])
  .describe("The operator's view, or (spectators in public mode) the same without any USD figure");
