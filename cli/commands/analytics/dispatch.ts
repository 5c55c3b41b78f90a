import { Command } from 'clipanion';
import type { DispatchAnalytics } from '../../../api/routes/analytics-dispatch.schema.ts';
import { table } from '../../base-command.ts';
import { AnalyticsCommand, duration, percent, spread, WINDOW_DETAILS, windowLine } from './analytics-command.ts';

export class AnalyticsDispatchCommand extends AnalyticsCommand<DispatchAnalytics> {
  static override paths = [['analytics', 'dispatch']];

  static override usage = Command.Usage({
    category: 'Analytics',
    description: "how a window's runs were dispatched (origin, retry kind, provider, model, agent) and the queue now",
    details: `
      GET /analytics/dispatch (operator token). NDJSON prints the whole answer as one line. \`--output pretty\`
      prints what the runs were dispatched with, the queue now (depth, running, the oldest queued run's wait)
      and the window's queue wait, then one table \`BY KEY RUNS SHARE ACTIVE SUCCESS AVG WAIT\` for origin (the
      run's trigger), retry kind (fresh, continue, replicate, plan_retry), provider, model and agent.

      ${WINDOW_DETAILS}
    `,
    examples: [
      ['Dispatch of the last 30 days', '$0 analytics dispatch --output pretty'],
      ['The queue of one project', '$0 analytics dispatch --project prj_0123456789ab --output pretty'],
    ],
  });

  protected readonly verb = 'dispatch';

  protected pretty(answer: DispatchAnalytics): string[] {
    const { totals, queue } = answer;
    const groups = {
      origin: answer.byOrigin,
      retry: answer.byRetryKind,
      provider: answer.byProvider,
      model: answer.byModel,
      agent: answer.byAgent,
    };
    const rows = Object.entries(groups).flatMap(([by, buckets]) =>
      buckets.map((bucket) => [
        by,
        bucket.key,
        String(bucket.runs),
        percent(bucket.share),
        String(bucket.active),
        percent(bucket.successRate),
        duration(bucket.avgQueueWaitMs),
      ]),
    );
    return [
      windowLine('dispatch', answer.filter),
      `${totals.runs} runs: ${totals.active} active, ${totals.planChildren} plan-run children, ` +
        `${totals.seeded} seeded, ${totals.costCapped} cost-capped, ${totals.retries} retries or clones`,
      `queue now: ${queue.depth} queued (oldest waiting ${duration(queue.oldestQueuedAgeMs)}), ` +
        `${queue.running} running; wait ${spread(queue.waitMs)}`,
      table(['BY', 'KEY', 'RUNS', 'SHARE', 'ACTIVE', 'SUCCESS', 'AVG WAIT'], rows),
    ];
  }
}
