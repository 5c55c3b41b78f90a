import { Command } from 'clipanion';
import type { z } from 'zod';
import type { runAnalyticsResponse } from '../../../api/routes/analytics.schema.ts';
import { table } from '../../base-command.ts';
import {
  AnalyticsCommand,
  block,
  duration,
  percent,
  spread,
  usd,
  WINDOW_DETAILS,
  windowLine,
} from './analytics-command.ts';

type RunAnalytics = z.output<typeof runAnalyticsResponse>;

export class AnalyticsRunsCommand extends AnalyticsCommand<RunAnalytics> {
  static override paths = [['analytics', 'runs']];

  static override usage = Command.Usage({
    category: 'Analytics',
    description: 'run outcomes over a window: totals, per agent, model and provider, failures, landed work',
    details: `
      GET /analytics/runs. NDJSON prints the whole answer as one line. \`--output pretty\` prints the totals
      (states, success and merged-PR rates, duration and queue wait, cost), a table per agent, model and provider,
      and the failure reasons. Without an operator token on a public instance, the answer has no USD figure.

      ${WINDOW_DETAILS}
    `,
    examples: [
      ['The last 30 days, as a table', '$0 analytics runs --output pretty'],
      ['One project in November', '$0 analytics runs --project prj_0123456789ab --from 2026-11-01 --to 2026-11-30'],
    ],
  });

  protected readonly verb = 'runs';

  protected pretty(answer: RunAnalytics): string[] {
    const { totals } = answer;
    const cost = 'cost' in totals ? `, cost ${usd(totals.cost.total)} (${totals.cost.priced} priced)` : '';
    const groups = (title: string, buckets: RunAnalytics['byAgent']) =>
      block(
        title,
        buckets.map((bucket) => [
          bucket.key,
          String(bucket.runs),
          percent(bucket.successRate),
          `${bucket.prsMerged}/${bucket.prStateKnown}`,
          String(bucket.tokens.total),
          'costUsd' in bucket ? usd(bucket.costUsd) : '—',
          duration(bucket.avgDurationMs),
        ]),
        (rows) => table(['KEY', 'RUNS', 'SUCCESS', 'MERGED', 'TOKENS', 'COST', 'AVG DURATION'], rows),
      );
    return [
      windowLine('runs', answer.filter),
      `${totals.runs} runs: ${totals.succeeded} succeeded, ${totals.failed} failed, ${totals.cancelled} cancelled, ` +
        `${totals.active} active — success ${percent(totals.successRate)}, ` +
        `merged PRs ${totals.prsMerged}/${totals.prStateKnown} (${percent(totals.mergedPrRate)})`,
      `duration ${spread(totals.durationMs)}; queue wait ${spread(totals.queueWaitMs)}; ` +
        `tokens ${totals.tokens.total}${cost}`,
      ...groups('by agent', answer.byAgent),
      ...groups('by model', answer.byModel),
      ...groups('by provider', answer.byProvider),
      '',
      `failures: ${answer.byFailureReason.map((row) => `${row.key} ${row.runs}`).join(', ') || '(none)'}`,
    ];
  }
}
