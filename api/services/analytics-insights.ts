// The sentences of GET /analytics/behavior's `insights`: each is derived from numbers the same
// answer carries, applies only past a threshold (INSIGHT_THRESHOLDS, stated in the document), and
// says what it is about in `value`, so a dashboard can show, sort or drop them.
import {
  INSIGHT_THRESHOLDS,
  type BehaviorAnalytics,
  type BehaviorInsight,
  type InsightCode,
} from '../routes/analytics-behavior.schema.ts';

const percent = (share: number) => `${Math.round(share * 100)}%`;
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const usd = (value: number) => `$${value.toFixed(2)}`;

/** The insights of a behavior answer, in the order the document lists their codes. */
export function behaviorInsights(answer: Omit<BehaviorAnalytics, 'insights'>): BehaviorInsight[] {
  const { mining, directories, outcomes, contextWaste } = answer;
  const insights: BehaviorInsight[] = [];
  const say = (code: InsightCode, severity: BehaviorInsight['severity'], value: number | null, message: string) =>
    insights.push({ code, severity, message, value });
  if (mining.windowRuns === 0) {
    say('no_runs', 'info', 0, 'No run was created in this window.');
    return insights;
  }
  if (answer.truncated)
    say(
      'scan_truncated',
      'warning',
      mining.windowRuns,
      `Only the newest ${mining.scannedRuns} of the window's ${mining.windowRuns} runs were examined.`,
    );
  const [tool] = mining.tools;
  if (tool?.share != null)
    say(
      'top_tool',
      'info',
      tool.share,
      `${tool.key} is the most used tool: ${percent(tool.share)} of ${plural(mining.toolCalls, 'tool call')}, ` +
        `in ${plural(tool.runs, 'run')}.`,
    );
  const [directory] = directories;
  if (directory?.share != null)
    say(
      'hot_directory',
      'info',
      directory.share,
      `${directory.key} takes ${percent(directory.share)} of the file edits ` +
        `(${plural(directory.edits, 'edit')} in ${plural(directory.runs, 'run')}).`,
    );
  const steered = outcomes.bySteering.find((side) => side.key === 'steered');
  const unsteered = outcomes.bySteering.find((side) => side.key === 'unsteered');
  const enough = (side: typeof steered) => (side?.terminal ?? 0) >= INSIGHT_THRESHOLDS.steeringMinTerminal;
  if (enough(steered) && enough(unsteered)) {
    const delta = steered!.successRate! - unsteered!.successRate!;
    if (Math.abs(delta) >= INSIGHT_THRESHOLDS.steeringMinDelta)
      say(
        'steering_effect',
        'info',
        delta,
        `Steered runs succeed ${delta > 0 ? 'more' : 'less'} often than unsteered ones: ` +
          `${percent(steered!.successRate!)} against ${percent(unsteered!.successRate!)}.`,
      );
  }
  const wasted = contextWaste.failedOrCancelled;
  if (wasted.tokenShare !== null && wasted.tokenShare >= INSIGHT_THRESHOLDS.wastedShare)
    say(
      'wasted_tokens',
      'warning',
      wasted.tokenShare,
      `Failed and cancelled runs used ${percent(wasted.tokenShare)} of the tokens ` +
        `(${wasted.tokens} tokens, ${usd(wasted.costUsd)}).`,
    );
  const costly = contextWaste.costlyFailures;
  if (costly.runs > 0)
    say(
      'costly_failures',
      'warning',
      costly.runs,
      `${plural(costly.runs, 'failed run')} had used more than ${costly.thresholdTokens} tokens each ` +
        `(${costly.tokens} tokens, ${usd(costly.costUsd)} in all).`,
    );
  const { input, cacheRead } = contextWaste.tokens;
  const share = contextWaste.cacheReadShare;
  if (
    share !== null &&
    input + cacheRead >= INSIGHT_THRESHOLDS.cacheMinPromptTokens &&
    share < INSIGHT_THRESHOLDS.lowCacheShare
  )
    say('low_cache_reuse', 'info', share, `Only ${percent(share)} of the prompt tokens came from the cache.`);
  return insights;
}
