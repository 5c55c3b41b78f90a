// Where the window's money went (GET /analytics/cost, operators only): by cost basis, and the
// costliest projects, models, providers, agents, plan-runs or runs.
import { useState } from 'preact/hooks';
import type { CostAnalytics } from '../api/types.ts';
import { count, money, percent } from '../format.ts';
import { BucketKey, Panel, Picker } from './analytics-kit.tsx';

const BASES: Record<CostAnalytics['byCostBasis'][number]['key'], string> = {
  api: 'API (metered)',
  subscription_estimate: 'Subscription (estimate)',
  unpriced: 'Unpriced',
};

const BREAKDOWNS = [
  ['project', 'Project'],
  ['model', 'Model'],
  ['provider', 'Provider'],
  ['agent', 'Agent'],
  ['plan', 'Plan-run'],
  ['run', 'Run'],
] as const;
type Breakdown = (typeof BREAKDOWNS)[number][0];

/** Enough rows to find the big spenders without a long page; the rest is summed up in one line. */
const TOP = 10;

function KeyCell({ breakdown, value, names }: { breakdown: Breakdown; value: string; names: Map<string, string> }) {
  if (value === '__none__') return <BucketKey value={value} />;
  if (breakdown === 'run')
    return (
      <a class="mono" href={`/ui/runs/${encodeURIComponent(value)}`}>
        {value}
      </a>
    );
  if (breakdown === 'plan')
    return (
      <a class="mono" href={`/ui/plan-runs/${encodeURIComponent(value)}`}>
        {value}
      </a>
    );
  return <BucketKey value={value} names={breakdown === 'project' ? names : undefined} />;
}

export function SpendPanel({ data, names }: { data: CostAnalytics; names: Map<string, string> }) {
  const [breakdown, setBreakdown] = useState<Breakdown>('project');
  const all = [...data.breakdowns[breakdown]].sort((a, b) => b.costUsd - a.costUsd);
  const rows = all.slice(0, TOP);
  const label = BREAKDOWNS.find(([value]) => value === breakdown)![1];
  const total = data.totals.costUsd;
  return (
    <Panel
      id="spend-title"
      title="Spend"
      tools={<Picker label="By" value={breakdown} choices={BREAKDOWNS} onChange={setBreakdown} />}
    >
      <p class="muted">
        {money(total)} over {count(data.totals.priced)} priced of {count(data.totals.runs)} runs.
      </p>
      {rows.length === 0 ? (
        <p class="muted">No spend in this window.</p>
      ) : (
        <table class="table">
          <thead>
            <tr>
              <th scope="col">{label}</th>
              <th scope="col" class="num">
                Runs
              </th>
              <th scope="col" class="num">
                Priced
              </th>
              <th scope="col" class="num">
                Cost
              </th>
              <th scope="col" class="num">
                Share
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row.key}>
                <td data-label={label}>
                  <KeyCell breakdown={breakdown} value={row.key} names={names} />
                </td>
                <td data-label="Runs" class="num">
                  {count(row.runs)}
                </td>
                <td data-label="Priced" class="num">
                  {count(row.priced)}
                </td>
                <td data-label="Cost" class="num">
                  {money(row.costUsd)}
                </td>
                <td data-label="Share" class="num">
                  {percent(total > 0 ? row.costUsd / total : null)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {all.length > TOP ? (
        <p class="muted">
          {all.length - TOP} more, {money(all.slice(TOP).reduce((sum, row) => sum + row.costUsd, 0))} together.
        </p>
      ) : null}
      <h3 class="subhead">By cost basis</h3>
      <table class="table">
        <thead>
          <tr>
            <th scope="col">Basis</th>
            <th scope="col" class="num">
              Runs
            </th>
            <th scope="col" class="num">
              Cost
            </th>
          </tr>
        </thead>
        <tbody>
          {data.byCostBasis.map((row) => (
            <tr key={row.key}>
              <td data-label="Basis">{BASES[row.key]}</td>
              <td data-label="Runs" class="num">
                {count(row.runs)}
              </td>
              <td data-label="Cost" class="num">
                {row.key === 'unpriced' ? '—' : money(row.costUsd, row.key === 'subscription_estimate')}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </Panel>
  );
}
