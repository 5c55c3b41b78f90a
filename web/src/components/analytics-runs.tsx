// The run analytics tables: outcomes per agent, model or provider; landed work (merged PRs, time
// to merge, steering, cost per merged PR); failures per reason. Spectators' copies carry no USD:
// the cost columns appear only when the answer has them.
import { useState } from 'preact/hooks';
import type { OperatorRunAnalytics, RunAnalytics } from '../api/types.ts';
import { count, duration, money, percent } from '../format.ts';
import { Facts } from './ui.tsx';
import { BucketKey, ofTotal, Panel, Picker } from './analytics-kit.tsx';

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

/** Runs, success and landed PRs per agent, model or provider. */
export function OutcomesTable({ data }: { data: RunAnalytics }) {
  const [group, setGroup] = useState<Group>('agent');
  const rows = groupRows(data, group);
  const label = GROUPS.find(([value]) => value === group)![1];
  return (
    <Panel
      id="outcomes-title"
      title="Outcomes"
      tools={<Picker label="By" value={group} choices={GROUPS} onChange={setGroup} />}
    >
      {rows.length === 0 ? (
        <p class="muted">No runs in this window.</p>
      ) : (
        <table class="table">
          <thead>
            <tr>
              <th scope="col">{label}</th>
              <th scope="col" class="num">
                Runs
              </th>
              <th scope="col" class="num">
                Success
              </th>
              <th scope="col" class="num">
                Failed
              </th>
              <th scope="col" class="num">
                PRs merged
              </th>
              <th scope="col" class="num">
                Avg duration
              </th>
              <th scope="col" class="num">
                Tokens
              </th>
              {withCost(data) ? (
                <th scope="col" class="num">
                  Cost
                </th>
              ) : null}
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row.key}>
                <td data-label={label}>
                  <BucketKey value={row.key} />
                </td>
                <td data-label="Runs" class="num">
                  {count(row.runs)}
                </td>
                <td data-label="Success" class="num">
                  {percent(row.successRate)}
                </td>
                <td data-label="Failed" class="num">
                  {count(row.failed)}
                </td>
                <td data-label="PRs merged" class="num" title="merged / PRs whose state is known">
                  {ofTotal(row.prsMerged, row.prStateKnown)}
                </td>
                <td data-label="Avg duration" class="num">
                  {duration(row.avgDurationMs)}
                </td>
                <td data-label="Tokens" class="num">
                  {count(row.tokens.total)}
                </td>
                {withCost(data) ? (
                  <td data-label="Cost" class="num">
                    {money('costUsd' in row && typeof row.costUsd === 'number' ? row.costUsd : null)}
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Panel>
  );
}

const SPEND_GROUPS = [...GROUPS, ['project', 'Project']] as const;
type SpendGroup = (typeof SPEND_GROUPS)[number][0];

/** Merged PRs, how long they took, whether steering helped, and (operators) what each merge cost. */
export function LandedWork({ data, names }: { data: RunAnalytics; names: Map<string, string> }) {
  const { totals, outcomes } = data;
  const merge = outcomes.timeToMergeMs;
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
      <table class="table">
        <thead>
          <tr>
            <th scope="col">Runs</th>
            <th scope="col" class="num">
              Count
            </th>
            <th scope="col" class="num">
              Finished
            </th>
            <th scope="col" class="num">
              Success
            </th>
            <th scope="col" class="num">
              PRs merged
            </th>
          </tr>
        </thead>
        <tbody>
          {(['steered', 'unsteered'] as const).map((side) => {
            const row = outcomes.steering[side];
            return (
              <tr key={side}>
                <td data-label="Runs">{side === 'steered' ? 'Steered (sent a message)' : 'Not steered'}</td>
                <td data-label="Count" class="num">
                  {count(row.runs)}
                </td>
                <td data-label="Finished" class="num">
                  {count(row.terminal)}
                </td>
                <td data-label="Success" class="num">
                  {percent(row.successRate)}
                </td>
                <td data-label="PRs merged" class="num">
                  {ofTotal(row.prsMerged, row.prStateKnown)} ({percent(row.mergedPrRate)})
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {withCost(data) ? <CostPerMergedPr data={data} names={names} /> : null}
    </Panel>
  );
}

function CostPerMergedPr({ data, names }: { data: OperatorRunAnalytics; names: Map<string, string> }) {
  const [group, setGroup] = useState<SpendGroup>('agent');
  const split = data.outcomes.costPerMergedPr;
  const rows =
    group === 'agent'
      ? split.byAgent
      : group === 'model'
        ? split.byModel
        : group === 'provider'
          ? split.byProvider
          : split.byProject;
  const label = SPEND_GROUPS.find(([value]) => value === group)![1];
  return (
    <>
      <div class="card-head">
        <h3 class="subhead">Cost per merged PR</h3>
        <Picker label="By" value={group} choices={SPEND_GROUPS} onChange={setGroup} />
      </div>
      <table class="table">
        <thead>
          <tr>
            <th scope="col">{label}</th>
            <th scope="col" class="num">
              Spend
            </th>
            <th scope="col" class="num">
              Priced runs
            </th>
            <th scope="col" class="num">
              PRs merged
            </th>
            <th scope="col" class="num">
              Per merged PR
            </th>
          </tr>
        </thead>
        <tbody>
          {[...rows, { ...split.overall, key: '' }].map((row) => (
            <tr key={row.key} class={row.key === '' ? 'total-row' : undefined}>
              <td data-label={label}>
                {row.key === '' ? 'All' : <BucketKey value={row.key} names={group === 'project' ? names : undefined} />}
              </td>
              <td data-label="Spend" class="num">
                {money(row.costUsd)}
              </td>
              <td data-label="Priced runs" class="num">
                {count(row.priced)}
              </td>
              <td data-label="PRs merged" class="num">
                {ofTotal(row.prsMerged, row.prStateKnown)}
              </td>
              <td data-label="Per merged PR" class="num">
                {money(row.costPerMergedPrUsd)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** Failed runs per failure reason. */
export function FailureReasons({ data }: { data: RunAnalytics }) {
  return (
    <Panel id="failures-title" title="Failures">
      {data.byFailureReason.length === 0 ? (
        <p class="muted">No failed runs in this window.</p>
      ) : (
        <table class="table">
          <thead>
            <tr>
              <th scope="col">Reason</th>
              <th scope="col" class="num">
                Runs
              </th>
            </tr>
          </thead>
          <tbody>
            {data.byFailureReason.map((row) => (
              <tr key={row.key}>
                <td data-label="Reason">
                  {row.key === '__none__' ? <span class="muted">none given</span> : row.key.replace(/_/g, ' ')}
                </td>
                <td data-label="Runs" class="num">
                  {count(row.runs)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Panel>
  );
}
