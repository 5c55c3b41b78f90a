// A plan-run's children in order: the seed each one works on, its run, what that run cost and the PR it
// opened. Rows carry data-seq and data-state so a test (or a reader's tools) can find one child.
import type { PlanRunChildView, PlanRunRun } from '../api/types.ts';
import { money, span, httpUrl } from '../format.ts';
import { Empty, StateBadge } from './ui.tsx';

export function PlanChildren({ rows, runs, now }: { rows: PlanRunChildView[]; runs: PlanRunRun[]; now: number }) {
  if (rows.length === 0) return <Empty>No children.</Empty>;
  const runsById = new Map(runs.map((run) => [run.id, run]));
  return (
    <table class="table plan-children">
      <thead>
        <tr>
          <th scope="col" class="num">
            #
          </th>
          <th scope="col">Seed</th>
          <th scope="col">Child</th>
          <th scope="col">Run</th>
          <th scope="col">Run state</th>
          <th scope="col" class="num">
            Cost
          </th>
          <th scope="col" class="num">
            Duration
          </th>
          <th scope="col">PR</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((child) => {
          const run = child.runId ? runsById.get(child.runId) : undefined;
          const reason = 'failureReason' in child ? child.failureReason : null;
          const running = run?.state === 'queued' || run?.state === 'running';
          return (
            <tr key={child.seq} data-seq={child.seq} data-state={child.state}>
              <td data-label="#" class="num">
                {child.seq}
              </td>
              <td data-label="Seed" class="mono">
                {child.seedId}
              </td>
              <td data-label="Child">
                <StateBadge state={child.state} />
                {reason ? <span class="reason">{reason.replace(/_/g, ' ')}</span> : null}
              </td>
              <td data-label="Run">
                {child.runId ? (
                  <>
                    <a href={`/ui/runs/${encodeURIComponent(child.runId)}`} class="mono">
                      {child.runId}
                    </a>{' '}
                    <a
                      href={`/ui/runs/${encodeURIComponent(child.runId)}#diff`}
                      class="diff-link"
                      data-testid="child-diff"
                    >
                      diff
                    </a>
                  </>
                ) : (
                  <span class="muted">—</span>
                )}
              </td>
              <td data-label="Run state">
                <StateBadge state={run?.state} />
              </td>
              <td data-label="Cost" class="num">
                {money(run?.costUsd, run?.costBasis === 'subscription_estimate')}
              </td>
              <td data-label="Duration" class="num">
                {run?.startedAt ? span(run.startedAt, run.endedAt ?? (running ? now : null)) : '—'}
              </td>
              <td data-label="PR">
                {run?.prUrl ? (
                  <a href={httpUrl(run.prUrl)} target="_blank" rel="noopener noreferrer" title={run.prUrl}>
                    <StateBadge state={run.prState ?? 'open'} />
                  </a>
                ) : (
                  <span class="muted">—</span>
                )}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
