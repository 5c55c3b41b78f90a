// How the window's runs were dispatched (GET /analytics/dispatch, operators only): the totals, the
// queue now, and one breakdown at a time (origin, retry kind, provider, model, agent).
import { useState } from 'preact/hooks';
import type { DispatchAnalytics } from '../api/types.ts';
import { count, duration, percent } from '../format.ts';
import { Facts } from './ui.tsx';
import { BucketKey, Panel, Picker } from './analytics-kit.tsx';

const BREAKDOWNS = [
  ['byRetryKind', 'Retry kind'],
  ['byOrigin', 'Origin'],
  ['byProvider', 'Provider'],
  ['byModel', 'Model'],
  ['byAgent', 'Agent'],
] as const;
type Breakdown = (typeof BREAKDOWNS)[number][0];

const RETRY_KINDS: Record<string, string> = {
  fresh: 'Fresh dispatch',
  continue: 'Continue (from a pushed branch)',
  replicate: 'Replicate (same input again)',
  plan_retry: 'Plan-run retry (provider error)',
};

export function DispatchPanel({ data }: { data: DispatchAnalytics }) {
  const [breakdown, setBreakdown] = useState<Breakdown>('byRetryKind');
  const { totals, queue } = data;
  const rows: DispatchAnalytics['byOrigin'] = data[breakdown];
  const label = BREAKDOWNS.find(([value]) => value === breakdown)![1];
  return (
    <Panel
      id="dispatch-title"
      title="Dispatch"
      tools={<Picker label="By" value={breakdown} choices={BREAKDOWNS} onChange={setBreakdown} />}
    >
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
      {rows.length === 0 ? (
        <p class="muted">No runs in this window.</p>
      ) : (
        <table class="table dispatch-table">
          <thead>
            <tr>
              <th scope="col">{label}</th>
              <th scope="col" class="num">
                Runs
              </th>
              <th scope="col" class="num">
                Share
              </th>
              <th scope="col" class="num">
                Active
              </th>
              <th scope="col" class="num">
                Success
              </th>
              <th scope="col" class="num">
                Avg queue wait
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row.key}>
                <td data-label={label}>
                  {breakdown === 'byRetryKind' ? (RETRY_KINDS[row.key] ?? row.key) : <BucketKey value={row.key} />}
                </td>
                <td data-label="Runs" class="num">
                  {count(row.runs)}
                </td>
                <td data-label="Share" class="num">
                  {percent(row.share)}
                </td>
                <td data-label="Active" class="num">
                  {count(row.active)}
                </td>
                <td data-label="Success" class="num">
                  {percent(row.successRate)}
                </td>
                <td data-label="Avg queue wait" class="num">
                  {duration(row.avgQueueWaitMs)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Panel>
  );
}
