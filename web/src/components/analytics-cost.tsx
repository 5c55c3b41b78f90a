// Where the window's money went (GET /analytics/cost, operators only): by cost basis, the costliest
// projects, models, providers, agents, plan-runs or runs, and the PRs svc answered with rounds.
import type { CostAnalytics } from '../api/types.ts';
import { count, money, percent } from '../format.ts';
import { BucketKey, Panel, useBreakdown } from './analytics-kit.tsx';
import { type Column, DataTable } from './data-table.tsx';

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

const BASIS_COLUMNS: Column<CostAnalytics['byCostBasis'][number]>[] = [
  { label: 'Basis', render: (row) => BASES[row.key] },
  { label: 'Runs', num: true, render: (row) => count(row.runs) },
  {
    label: 'Cost',
    num: true,
    render: (row) => (row.key === 'unpriced' ? '—' : money(row.costUsd, row.key === 'subscription_estimate')),
  },
];

export function SpendPanel({ data, names }: { data: CostAnalytics; names: Map<string, string> }) {
  const { value: breakdown, label, picker } = useBreakdown(BREAKDOWNS, 'project');
  const all = [...data.breakdowns[breakdown]].sort((a, b) => b.costUsd - a.costUsd);
  const rows = all.slice(0, TOP);
  const total = data.totals.costUsd;
  return (
    <Panel id="spend-title" title="Spend" tools={picker}>
      <p class="muted">
        {money(total)} over {count(data.totals.priced)} priced of {count(data.totals.runs)} runs.
      </p>
      <DataTable
        columns={[
          { label, render: (row) => <KeyCell breakdown={breakdown} value={row.key} names={names} /> },
          { label: 'Runs', num: true, render: (row) => count(row.runs) },
          { label: 'Priced', num: true, render: (row) => count(row.priced) },
          { label: 'Cost', num: true, render: (row) => money(row.costUsd) },
          { label: 'Share', num: true, render: (row) => percent(total > 0 ? row.costUsd / total : null) },
        ]}
        rows={rows}
        rowKey={(row) => row.key}
        empty={<p class="muted">No spend in this window.</p>}
      />
      {all.length > TOP ? (
        <p class="muted">
          {all.length - TOP} more, {money(all.slice(TOP).reduce((sum, row) => sum + row.costUsd, 0))} together.
        </p>
      ) : null}
      <h3 class="subhead">By cost basis</h3>
      <DataTable columns={BASIS_COLUMNS} rows={data.byCostBasis} rowKey={(row) => row.key} />
      <h3 class="subhead">Pull-request loops</h3>
      <p class="muted" data-testid="pr-loop-spend">
        {count(data.pullRequests.prs)} PRs answered with {count(data.pullRequests.rounds)} rounds:{' '}
        {money(data.pullRequests.costUsd)} in all, each PR's opening run and its rounds.
      </p>
      <DataTable
        columns={[
          { label: 'Opened by', render: (row) => <KeyCell breakdown="run" value={row.key} names={names} /> },
          { label: 'Rounds', num: true, render: (row) => count(row.rounds) },
          { label: 'PR cost', num: true, render: (row) => money(row.costUsd) },
        ]}
        rows={data.pullRequests.costliest.slice(0, TOP)}
        rowKey={(row) => row.key}
        empty={<p class="muted">No PR loop rounds in this window.</p>}
      />
    </Panel>
  );
}
