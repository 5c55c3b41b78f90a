// The sentences of GET /analytics/behavior: each insight applies past its threshold only, in the
// order of the codes, with the number it is about (no database: the numbers are given).
import test from 'ava';
import type { BehaviorAnalytics } from '../../api/routes/analytics-behavior.schema.ts';
import { behaviorInsights } from '../../api/services/analytics-insights.ts';
import { mined, side } from './analytics-events-fixture.ts';
import { tokens } from './analytics-fixture.ts';

test('insights: each applies past its threshold, in the order of the codes', (t) => {
  const sides = (steered: number, unsteered: number, terminal = 10) =>
    [
      side('steered', [terminal, terminal, steered, 0, 0]),
      side('unsteered', [terminal, terminal, unsteered, 0, 0]),
    ] as BehaviorAnalytics['outcomes']['bySteering'];
  const answer = {
    filter: { projectId: null, from: '', to: '' },
    mining: {
      windowRuns: 9000,
      scannedRuns: 5000,
      toolCalls: 10,
      tools: [mined('Bash', 6, 3, 10)],
    },
    directories: [{ key: 'src', edits: 4, files: 2, runs: 2, share: 0.8 }],
    outcomes: { bySteering: sides(8, 5), byEditing: [], byChangeSize: [] },
    contextWaste: {
      tokens: tokens(900_000, 10_000, 100_000, 0),
      cacheReadShare: 0.1,
      failedOrCancelled: { runs: 4, tokens: 400_000, costUsd: 12.5, tokenShare: 0.4 },
      costlyFailures: { runs: 2, tokens: 350_000, costUsd: 10, thresholdTokens: 100_000 },
      byFailureReason: [],
    },
    truncated: true,
  } as unknown as Omit<BehaviorAnalytics, 'insights'>;
  const insights = behaviorInsights(answer);
  t.deepEqual(
    insights.map(({ code, value }) => [code, value]),
    [
      ['scan_truncated', 9000],
      ['top_tool', 0.6],
      ['hot_directory', 0.8],
      ['steering_effect', 0.30000000000000004],
      ['wasted_tokens', 0.4],
      ['costly_failures', 2],
      ['low_cache_reuse', 0.1],
    ],
  );
  t.is(insights[3]!.message, 'Steered runs succeed more often than unsteered ones: 80% against 50%.');
  t.is(insights[4]!.message, 'Failed and cancelled runs used 40% of the tokens (400000 tokens, $12.50).');
  const quiet = behaviorInsights({
    ...answer,
    truncated: false,
    outcomes: { ...answer.outcomes, bySteering: sides(8, 9, 20) },
    contextWaste: {
      ...answer.contextWaste,
      cacheReadShare: 0.5,
      failedOrCancelled: { ...answer.contextWaste.failedOrCancelled, tokenShare: 0.2 },
      costlyFailures: { ...answer.contextWaste.costlyFailures, runs: 0 },
    },
  });
  t.deepEqual(
    quiet.map((insight) => insight.code),
    ['top_tool', 'hot_directory'],
    'a 5-point gap is under the steering threshold; waste and cache are within theirs',
  );
});
