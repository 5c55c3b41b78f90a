import { Command } from 'clipanion';
import type { z } from 'zod';
import type { costAnalyticsResponse } from '../../../api/routes/analytics.schema.ts';
import { table } from '../../base-command.ts';
import { AnalyticsCommand, usd, WINDOW_DETAILS, windowLine } from './analytics-command.ts';

type CostAnalytics = z.output<typeof costAnalyticsResponse>;

export class AnalyticsCostCommand extends AnalyticsCommand<CostAnalytics> {
  static override paths = [['analytics', 'cost']];

  static override usage = Command.Usage({
    category: 'Analytics',
    description: 'spend over a window, broken down by day, project, plan-run, run, agent, model, provider and basis',
    details: `
      GET /analytics/cost (operator token). NDJSON prints the whole answer as one line. \`--output pretty\`
      prints the total and one table \`BY KEY COST RUNS PRICED\` with every breakdown (days oldest first, the
      others costliest first; \`__none__\` for runs without a value).

      ${WINDOW_DETAILS}
    `,
    examples: [
      ['Spend of the last 30 days', '$0 analytics cost --output pretty'],
      ['Spend of one day', '$0 analytics cost --from 2026-11-22 --to 2026-11-22'],
    ],
  });

  protected readonly verb = 'cost';

  protected pretty(answer: CostAnalytics): string[] {
    const { totals, breakdowns } = answer;
    const rows = [
      ...Object.entries(breakdowns).flatMap(([by, buckets]) =>
        buckets.map((bucket) => [by, bucket.key, usd(bucket.costUsd), String(bucket.runs), String(bucket.priced)]),
      ),
      ...answer.byCostBasis.map((basis) => ['basis', basis.key, usd(basis.costUsd), String(basis.runs), '']),
    ];
    return [
      windowLine('cost', answer.filter),
      `${usd(totals.costUsd)} over ${totals.runs} runs (${totals.priced} priced)`,
      table(['BY', 'KEY', 'COST', 'RUNS', 'PRICED'], rows),
    ];
  }
}
