import { Command } from 'clipanion';
import type { BehaviorAnalytics } from '../../../api/routes/analytics-behavior.schema.ts';
import { table } from '../../base-command.ts';
import { AnalyticsCommand, block, percent, usd, WINDOW_DETAILS, windowLine } from './analytics-command.ts';

export class AnalyticsBehaviorCommand extends AnalyticsCommand<BehaviorAnalytics> {
  static override paths = [['analytics', 'behavior']];

  static override usage = Command.Usage({
    category: 'Analytics',
    description: "what the agents of a window's runs did: tools, directories, outcomes, wasted tokens, insights",
    details: `
      GET /analytics/behavior (operator token): the newest 5000 runs of the window at most (\`truncated\` says
      when there were more). NDJSON prints the whole answer as one line. \`--output pretty\` prints what was
      examined, the insights (one sentence each), the tools and the directories the edit tools wrote to most, the
      outcomes by steering, editing and change size, and the tokens of failed and cancelled runs.

      ${WINDOW_DETAILS}
    `,
    examples: [
      ['Behavior of the last 30 days', '$0 analytics behavior --output pretty'],
      ['The insights only', "$0 analytics behavior | jq -r '.insights[].message'"],
    ],
  });

  protected readonly verb = 'behavior';

  protected pretty(answer: BehaviorAnalytics): string[] {
    const { mining, contextWaste: waste } = answer;
    const outcomes = Object.entries(answer.outcomes).flatMap(([by, sides]) =>
      sides.map((side) => [
        by.replace(/^by/, '').toLowerCase(),
        side.key,
        String(side.runs),
        percent(side.successRate),
        `${side.prsMerged}/${side.prStateKnown}`,
      ]),
    );
    const failed = waste.failedOrCancelled;
    return [
      windowLine('behavior', answer.filter),
      `examined ${mining.scannedRuns} of ${mining.windowRuns} runs` +
        `${answer.truncated ? ' (truncated: the newest only)' : ''}: ` +
        `${mining.events} events of ${mining.eventKinds} kinds, ${mining.toolCalls} tool calls, ` +
        `${mining.steering.messages} steering messages, ${mining.changes.filesChanged} files changed`,
      ...answer.insights.map((insight) => `${insight.severity === 'warning' ? '!' : '-'} ${insight.message}`),
      ...block(
        'tools',
        mining.tools.map((tool) => [tool.key, String(tool.count), String(tool.runs), percent(tool.share)]),
        (rows) => table(['TOOL', 'CALLS', 'RUNS', 'SHARE'], rows),
      ),
      ...block(
        'directories',
        answer.directories.map((dir) => [
          dir.key,
          String(dir.edits),
          String(dir.files),
          String(dir.runs),
          percent(dir.share),
        ]),
        (rows) => table(['DIRECTORY', 'EDITS', 'FILES', 'RUNS', 'SHARE'], rows),
      ),
      ...block('outcomes', outcomes, (rows) => table(['BY', 'KEY', 'RUNS', 'SUCCESS', 'MERGED'], rows)),
      '',
      `wasted: ${failed.runs} failed or cancelled runs used ${failed.tokens} tokens (${percent(failed.tokenShare)}), ` +
        `${usd(failed.costUsd)}; ${waste.costlyFailures.runs} failed after more than ` +
        `${waste.costlyFailures.thresholdTokens} tokens; cache reads ${percent(waste.cacheReadShare)} of prompt tokens`,
    ];
  }
}
