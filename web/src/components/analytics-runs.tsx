// The run analytics tables: outcomes per agent, model or provider; landed work (merged PRs, time
// to merge, steering, cost per merged PR); failures per reason. Spectators' copies carry no USD:
// the cost columns appear only when the answer has them.
import type { OperatorRunAnalytics, RunAnalytics } from '../api/types.ts';
import { count, duration, money, percent } from '../format.ts';
import { Facts } from './ui.tsx';
import { BucketKey, ofTotal, Panel, useBreakdown } from './analytics-kit.tsx';
import { type Column, DataTable } from './data-table.tsx';

/** The operator's shape (USD figures included), told apart by the cost totals. */
export function withCost(data: RunAnalytics): data is OperatorRunAnalytics {
  return 'cost' in data.totals;
}

const GROUPS = [
  ['agent', 'Agent'],
  ['model', 'Model'],
  ['provider', 'Provider'],
] as const;
type Group = (typeof GROUPS)[number][0];

function groupRows(data: RunAnalytics, group: Group) {
  return group === 'agent' ? data.byAgent : group === 'model' ? data.byModel : data.byProvider;
}

type OutcomeRow = ReturnType<typeof groupRows>[number];

/** Runs, success and landed PRs per agent, model or provider. */
export function OutcomesTable({ data }: { data: RunAnalytics }) {
  const { value: group, label, picker } = useBreakdown(GROUPS, 'agent');
  const columns: Column<OutcomeRow>[] = [
    { label, render: (row) => <BucketKey value={row.key} /> },
    { label: 'Runs', num: true, render: (row) => count(row.runs) },
    { label: 'Success', num: true, render: (row) => percent(row.successRate) },
    { label: 'Failed', num: true, render: (row) => count(row.failed) },
    {
      label: 'PRs merged',
      num: true,
      title: () => 'merged / PRs whose state is known',
      render: (row) => ofTotal(row.prsMerged, row.prStateKnown),
    },
    { label: 'Avg duration', num: true, render: (row) => duration(row.avgDurationMs) },
    { label: 'Tokens', num: true, render: (row) => count(row.tokens.total) },
  ];
  if (withCost(data))
    columns.push({
      label: 'Cost',
      num: true,
      render: (row) => money('costUsd' in row && typeof row.costUsd === 'number' ? row.costUsd : null),
    });
  return (
    <Panel id="outcomes-title" title="Outcomes" tools={picker}>
      <DataTable
        columns={columns}
        rows={groupRows(data, group)}
        rowKey={(row) => row.key}
        empty={<p class="muted">No runs in this window.</p>}
      />
    </Panel>
  );
}

const SPEND_GROUPS = [...GROUPS, ['project', 'Project']] as const;

type SteeringRow = RunAnalytics['outcomes']['steering']['steered'] & { key: 'steered' | 'unsteered' };

const STEERING_COLUMNS: Column<SteeringRow>[] = [
  { label: 'Runs', render: (row) => (row.key === 'steered' ? 'Steered (sent a message)' : 'Not steered') },
  { label: 'Count', num: true, render: (row) => count(row.runs) },
  { label: 'Finished', num: true, render: (row) => count(row.terminal) },
  { label: 'Success', num: true, render: (row) => percent(row.successRate) },
  {
    label: 'PRs merged',
    num: true,
    render: (row) => `${ofTotal(row.prsMerged, row.prStateKnown)} (${percent(row.mergedPrRate)})`,
  },
];

/** Merged PRs, how long they took, whether steering helped, and (operators) what each merge cost. */
export function LandedWork({ data, names }: { data: RunAnalytics; names: Map<string, string> }) {
  const { totals, outcomes } = data;
  const merge = outcomes.timeToMergeMs;
  const sides = (['steered', 'unsteered'] as const).map((key) => ({ key, ...outcomes.steering[key] }));
  return (
    <Panel id="landed-title" title="Landed work">
      <Facts
        items={[
          ['PRs with a known state', count(totals.prStateKnown)],
          ['Merged', `${count(totals.prsMerged)} (${percent(totals.mergedPrRate)})`],
          ['Not merged (open or closed)', count(totals.prStateKnown - totals.prsMerged)],
          ['Time to merge, median', duration(merge.median)],
          ['Time to merge, p95', duration(merge.p95)],
          ...(withCost(data)
            ? [
                ['Cost per merged PR', money(data.outcomes.costPerMergedPr.overall.costPerMergedPrUsd)] as [
                  string,
                  string,
                ],
              ]
            : []),
        ]}
      />
      <h3 class="subhead">Steering</h3>
      <DataTable columns={STEERING_COLUMNS} rows={sides} rowKey={(side) => side.key} />
      {withCost(data) ? <CostPerMergedPr data={data} names={names} /> : null}
    </Panel>
  );
}

function CostPerMergedPr({ data, names }: { data: OperatorRunAnalytics; names: Map<string, string> }) {
  const { value: group, label, picker } = useBreakdown(SPEND_GROUPS, 'agent');
  const split = data.outcomes.costPerMergedPr;
  const rows =
    group === 'agent'
      ? split.byAgent
      : group === 'model'
        ? split.byModel
        : group === 'provider'
          ? split.byProvider
          : split.byProject;
  return (
    <>
      <div class="card-head">
        <h3 class="subhead">Cost per merged PR</h3>
        {picker}
      </div>
      <DataTable
        columns={[
          {
            label,
            render: (row) =>
              row.key === '' ? 'All' : <BucketKey value={row.key} names={group === 'project' ? names : undefined} />,
          },
          { label: 'Spend', num: true, render: (row) => money(row.costUsd) },
          { label: 'Priced runs', num: true, render: (row) => count(row.priced) },
          { label: 'PRs merged', num: true, render: (row) => ofTotal(row.prsMerged, row.prStateKnown) },
          { label: 'Per merged PR', num: true, render: (row) => money(row.costPerMergedPrUsd) },
        ]}
        rows={[...rows, { ...split.overall, key: '' }]}
        rowKey={(row) => row.key}
        row={(row) => ({ class: row.key === '' ? 'total-row' : undefined })}
      />
    </>
  );
}

const FAILURE_COLUMNS: Column<RunAnalytics['byFailureReason'][number]>[] = [
  {
    label: 'Reason',
    render: (row) => (row.key === '__none__' ? <span class="muted">none given</span> : row.key.replace(/_/g, ' ')),
  },
  { label: 'Runs', num: true, render: (row) => count(row.runs) },
];

/** Failed runs per failure reason. */
export function FailureReasons({ data }: { data: RunAnalytics }) {
  return (
    <Panel id="failures-title" title="Failures">
      <DataTable
        columns={FAILURE_COLUMNS}
        rows={data.byFailureReason}
        rowKey={(row) => row.key}
        empty={<p class="muted">No failed runs in this window.</p>}
      />
    </Panel>
  );
}
