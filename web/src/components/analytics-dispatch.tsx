// How the window's runs were dispatched (GET /analytics/dispatch, operators only): the totals, the
// queue now, and one breakdown at a time (origin, retry kind, provider, model, agent).
import type { DispatchAnalytics } from '../api/types.ts';
import { count, duration, percent } from '../format.ts';
import { Facts } from './ui.tsx';
import { BucketKey, Panel, useBreakdown } from './analytics-kit.tsx';
import { DataTable } from './data-table.tsx';

const BREAKDOWNS = [
  ['byRetryKind', 'Retry kind'],
  ['byOrigin', 'Origin'],
  ['byProvider', 'Provider'],
  ['byModel', 'Model'],
  ['byAgent', 'Agent'],
] as const;

const RETRY_KINDS: Record<string, string> = {
  fresh: 'Fresh dispatch',
  continue: 'Continue (from a pushed branch)',
  replicate: 'Replicate (same input again)',
  plan_retry: 'Plan-run retry (provider error)',
};

export function DispatchPanel({ data }: { data: DispatchAnalytics }) {
  const { value: breakdown, label, picker } = useBreakdown(BREAKDOWNS, 'byRetryKind');
  const { totals, queue } = data;
  const rows: DispatchAnalytics['byOrigin'] = data[breakdown];
  return (
    <Panel id="dispatch-title" title="Dispatch" tools={picker}>
      <Facts
        items={[
          ['Runs', count(totals.runs)],
          ['Retries and clones', count(totals.retries)],
          ['Plan-run children', count(totals.planChildren)],
          ['Seeded (from an issue)', count(totals.seeded)],
          ['With a cost cap', count(totals.costCapped)],
          ['Queued now', count(queue.depth)],
          ['Running now', count(queue.running)],
          ['Oldest queued', queue.oldestQueuedAgeMs === null ? 'nothing queued' : duration(queue.oldestQueuedAgeMs)],
          ['Queue wait, median', duration(queue.waitMs.median)],
          ['Queue wait, p95', duration(queue.waitMs.p95)],
        ]}
      />
      <DataTable
        class="dispatch-table"
        columns={[
          {
            label,
            render: (row) =>
              breakdown === 'byRetryKind' ? (RETRY_KINDS[row.key] ?? row.key) : <BucketKey value={row.key} />,
          },
          { label: 'Runs', num: true, render: (row) => count(row.runs) },
          { label: 'Share', num: true, render: (row) => percent(row.share) },
          { label: 'Active', num: true, render: (row) => count(row.active) },
          { label: 'Success', num: true, render: (row) => percent(row.successRate) },
          { label: 'Avg queue wait', num: true, render: (row) => duration(row.avgQueueWaitMs) },
        ]}
        rows={rows}
        rowKey={(row) => row.key}
        empty={<p class="muted">No runs in this window.</p>}
      />
    </Panel>
  );
}
