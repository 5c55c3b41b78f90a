// GET /analytics/behavior, shaped: the newest runs of the window (at most BEHAVIOR_LIMITS.runs) are
// mined in SQL for their events, tool calls, edited directories and steering; their outcomes are
// compared by steering, editing and change size; failed and cancelled spend is set apart; and a
// few sentences are derived from those numbers (analytics-insights.ts).
import type { AnalyticsRepository, AnalyticsScope, RunBucketRow } from '../../db/repositories/analytics.repository.ts';
import type { MinedTop } from '../../db/repositories/analytics-behavior-sql.ts';
import {
  BEHAVIOR_LIMITS,
  CHANGE_SIZE_KEYS,
  COSTLY_FAILURE_TOKENS,
  EDITING_KEYS,
  type BehaviorAnalytics,
  type MinedBucket,
} from '../routes/analytics-behavior.schema.ts';
import { compareKeys, keyOf, outcomeSides, ratio, tokensOf } from './analytics-buckets.ts';
import { behaviorInsights } from './analytics-insights.ts';
import type { AnalyticsFilter } from './analytics-window.ts';

/** How far the behavior scan goes: its run cap, and the tokens that make a failure costly. */
export interface BehaviorSettings {
  maxRuns: number;
  costlyFailureTokens: number;
}

export const DEFAULT_BEHAVIOR_SETTINGS: BehaviorSettings = {
  maxRuns: BEHAVIOR_LIMITS.runs,
  costlyFailureTokens: COSTLY_FAILURE_TOKENS,
};

/** Most first, ties by key (code points): the same order on both databases. */
const mostFirst = <T extends { key: string; count: number }>(buckets: T[]) =>
  buckets.sort((a, b) => b.count - a.count || compareKeys(a, b));

function mined(top: MinedTop): MinedBucket[] {
  return mostFirst(
    top.rows.map((row) => ({ key: keyOf(row), count: row.count, runs: row.runs, share: ratio(row.count, top.total) })),
  );
}

const waste = (row: RunBucketRow) => ({ runs: row.runs, tokens: tokensOf(row).total, costUsd: row.costUsd });

/** The behavior analytics of a scope (its newest `settings.maxRuns` runs). */
export async function behaviorAnalytics(
  rows: AnalyticsRepository,
  scope: AnalyticsScope,
  filter: AnalyticsFilter,
  settings: BehaviorSettings,
): Promise<BehaviorAnalytics> {
  const scanned: AnalyticsScope = { ...scope, newest: settings.maxRuns };
  const failed: AnalyticsScope = { ...scanned, states: ['failed'] };
  const mine = rows.behavior;
  const [windowRuns, totals, steering, editing, changeSize, wasted, costly, reasons, kinds, tools, dirs, inbox] =
    await Promise.all([
      rows.countRuns(scope),
      rows.totals(scanned),
      rows.buckets(scanned, 'steering'),
      rows.buckets(scanned, 'editing'),
      rows.buckets(scanned, 'changeSize'),
      rows.totals({ ...scanned, states: ['failed', 'cancelled'] }),
      rows.totals({ ...failed, overTokens: settings.costlyFailureTokens }),
      rows.buckets(failed, 'failureReason'),
      mine.eventKinds(scanned, BEHAVIOR_LIMITS.eventKinds),
      mine.tools(scanned, BEHAVIOR_LIMITS.tools),
      mine.directories(scanned, BEHAVIOR_LIMITS.directories),
      mine.steering(scanned),
    ]);
  const tokens = tokensOf(totals);
  const wastedTokens = tokensOf(wasted).total;
  const answer: Omit<BehaviorAnalytics, 'insights'> = {
    filter,
    mining: {
      windowRuns,
      scannedRuns: totals.runs,
      events: kinds.total,
      eventKinds: kinds.keys,
      byKind: mined(kinds),
      toolCalls: tools.total,
      tools: mined(tools),
      steering: {
        messages: inbox.messages,
        steeredRuns: inbox.runs,
        delivered: inbox.delivered,
        unread: inbox.unread,
        failed: inbox.failed,
      },
      changes: { ...totals.changes, avgFilesChanged: ratio(totals.changes.filesChanged, totals.changes.measured) },
    },
    directories: mostFirst(
      dirs.rows.map((row) => ({ key: keyOf(row), count: row.count, files: row.files, runs: row.runs })),
    ).map(({ key, count, files, runs }) => ({ key, edits: count, files, runs, share: ratio(count, dirs.total) })),
    outcomes: {
      bySteering: outcomeSides(['steered', 'unsteered'] as const, steering),
      byEditing: outcomeSides(EDITING_KEYS, editing),
      byChangeSize: outcomeSides(CHANGE_SIZE_KEYS, changeSize),
    },
    contextWaste: {
      tokens,
      cacheReadShare: ratio(tokens.cacheRead, tokens.input + tokens.cacheRead),
      failedOrCancelled: { ...waste(wasted), tokenShare: ratio(wastedTokens, tokens.total) },
      costlyFailures: { ...waste(costly), thresholdTokens: settings.costlyFailureTokens },
      byFailureReason: reasons
        .map((row) => ({ key: keyOf(row), ...waste(row) }))
        .sort((a, b) => b.tokens - a.tokens || b.runs - a.runs || compareKeys(a, b)),
    },
    truncated: windowRuns > settings.maxRuns,
  };
  const { truncated, ...found } = answer;
  // The members in the order the document lists them: insights between what they are derived from.
  return {
    filter,
    mining: found.mining,
    directories: found.directories,
    insights: behaviorInsights(answer),
    outcomes: found.outcomes,
    contextWaste: found.contextWaste,
    truncated,
  };
}
