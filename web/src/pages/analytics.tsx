// Analytics over a window of runs (by creation): outcomes and landed work for everyone, spend and
// dispatch for operators. The URL holds the window (last 7/30/90 days, or an explicit from/to)
// and the project, so a view can be shared; "last N days" stays relative when the link is opened.
import { useLocation } from 'preact-iso';
import { query } from '../api/client.ts';
import { useQuery } from '../api/cache.ts';
import { identity } from '../api/identity.ts';
import type { CostAnalytics, DispatchAnalytics, ProjectList, RunAnalytics } from '../api/types.ts';
import { ErrorBox, Loading, PageHeader } from '../components/ui.tsx';
import { useTitle } from '../components/hooks.ts';
import { ChartPlaceholder } from '../components/chart.tsx';
import { type Kpi, KpiTiles, Panel } from '../components/analytics-kit.tsx';
import { CostPerDayChart, RunsPerDayChart } from '../components/analytics-charts.tsx';
import { FailureReasons, LandedWork, OutcomesTable, withCost } from '../components/analytics-runs.tsx';
import { SpendPanel } from '../components/analytics-cost.tsx';
import { DispatchPanel } from '../components/analytics-dispatch.tsx';
import { count, duration, money, percent } from '../format.ts';
import { projectName } from './project-name.ts';

const WINDOWS = [7, 30, 90] as const;
const DEFAULT_DAYS = 30;
const DAY_MS = 86_400_000;

/** The last `days` UTC days, today included, as the API's ISO dates (a date covers its whole day). */
function lastDays(days: number): { from: string; to: string } {
  const today = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  return { from: iso(today - (days - 1) * DAY_MS), to: iso(today) };
}

function runKpis(data: RunAnalytics | undefined, operator: boolean): Kpi[] {
  const t = data?.totals;
  const full = data && withCost(data) ? data : undefined;
  // Operators' tiles wait for the same answer; '—' only when it came without USD.
  const usd = (pick: (view: NonNullable<typeof full>) => string) => (data ? (full ? pick(full) : '—') : undefined);
  const finished = t ? t.succeeded + t.failed + t.cancelled : 0;
  const items: Kpi[] = [
    { label: 'Runs', value: t && count(t.runs), detail: t && `${count(t.active)} still active` },
    {
      label: 'Success rate',
      value: t && percent(t.successRate),
      detail: t && `${count(t.succeeded)} of ${count(finished)} finished`,
    },
    {
      label: 'PRs merged',
      value: t && count(t.prsMerged),
      detail: t && `${percent(t.mergedPrRate)} of ${count(t.prStateKnown)} with a known state`,
    },
  ];
  if (operator)
    items.push(
      {
        label: 'Total cost',
        value: usd((view) => money(view.totals.cost.total)),
        detail: full && `${count(full.totals.cost.priced)} priced runs`,
      },
      {
        label: 'Cost per merged PR',
        value: usd((view) => money(view.outcomes.costPerMergedPr.overall.costPerMergedPrUsd)),
        detail: full && `${count(full.outcomes.costPerMergedPr.overall.prsMerged)} merged`,
      },
      {
        label: 'Cost per run',
        value: usd((view) => money(view.totals.cost.avg)),
        detail: full && `median ${money(full.totals.costUsd.median)}`,
      },
    );
  items.push(
    {
      label: 'Median duration',
      value: t && duration(t.durationMs.median),
      detail: t && `p95 ${duration(t.durationMs.p95)}`,
    },
    {
      label: 'Median queue wait',
      value: t && duration(t.queueWaitMs.median),
      detail: t && `p95 ${duration(t.queueWaitMs.p95)}`,
    },
    {
      label: 'Median time to merge',
      value: data && duration(data.outcomes.timeToMergeMs.median),
      detail: data && `p95 ${duration(data.outcomes.timeToMergeMs.p95)}`,
    },
    {
      label: 'Tokens',
      value: t && count(t.tokens.total),
      detail: t && `${count(t.tokens.cacheRead)} read from cache`,
    },
  );
  return items;
}

export function AnalyticsPage() {
  useTitle('Analytics');
  const { query: params, route, path } = useLocation();
  const operator = identity.value.kind === 'operator';
  const custom = Boolean(params.from || params.to);
  const days = WINDOWS.find((value) => String(value) === params.days) ?? DEFAULT_DAYS;
  const range = custom ? { from: params.from, to: params.to } : lastDays(days);
  const projectId = params.projectId || undefined;
  const api = query({ ...range, projectId });
  const runs = useQuery<RunAnalytics>(`/analytics/runs${api}`);
  // Spend and dispatch are operator routes: a spectator would only collect a 403.
  const cost = useQuery<CostAnalytics>(operator ? `/analytics/cost${api}` : null);
  const dispatch = useQuery<DispatchAnalytics>(operator ? `/analytics/dispatch${api}` : null);
  const projects = useQuery<ProjectList>('/projects');
  const names = new Map((projects.data?.projects ?? []).map((project) => [project.id, projectName(project.gitUrl)]));
  const kept = { days: custom ? undefined : params.days, from: params.from, to: params.to, projectId };
  const href = (changes: Record<string, string | undefined>) => `${path}${query({ ...kept, ...changes })}`;
  const applied = runs.data?.filter;

  return (
    <section>
      <PageHeader title="Analytics" />
      <form class="filters" onSubmit={(event) => event.preventDefault()} aria-label="Analytics window">
        <label>
          Window
          <select
            value={custom ? 'custom' : String(days)}
            onChange={(event) => {
              const value = event.currentTarget.value;
              if (value === 'custom') return;
              const chosen = value === String(DEFAULT_DAYS) ? undefined : value;
              route(href({ days: chosen, from: undefined, to: undefined }));
            }}
          >
            {WINDOWS.map((value) => (
              <option key={value} value={String(value)}>
                Last {value} days
              </option>
            ))}
            {custom ? <option value="custom">{`${params.from ?? '…'} to ${params.to ?? 'now'}`}</option> : null}
          </select>
        </label>
        <label>
          Project
          <select
            value={projectId ?? ''}
            onChange={(event) => route(href({ projectId: event.currentTarget.value || undefined }))}
          >
            <option value="">All projects</option>
            {projects.data?.projects.map((project) => (
              <option key={project.id} value={project.id}>
                {projectName(project.gitUrl)}
              </option>
            ))}
          </select>
        </label>
      </form>
      <p class="muted window-note" aria-live="polite">
        {applied ? `Runs created ${applied.from.slice(0, 10)} to ${applied.to.slice(0, 10)} (UTC).` : '\u00a0'}
        {operator ? '' : ' Spend and dispatch figures are for operators.'}
      </p>
      <ErrorBox error={runs.error} title="Could not load run analytics" />
      {runs.error ? null : <KpiTiles items={runKpis(runs.data, operator)} label="Key figures" />}
      <div class="chart-grid">
        <Panel id="runs-day-title" title="Runs per day">
          {runs.data ? (
            <RunsPerDayChart data={runs.data} />
          ) : runs.error ? (
            <p class="muted">Unavailable.</p>
          ) : (
            <ChartPlaceholder />
          )}
        </Panel>
        {operator ? (
          <Panel id="cost-day-title" title="Cost per day">
            {cost.error ? (
              <ErrorBox error={cost.error} title="Could not load cost analytics" />
            ) : cost.data ? (
              <CostPerDayChart data={cost.data} />
            ) : (
              <ChartPlaceholder />
            )}
          </Panel>
        ) : null}
      </div>
      {runs.data ? (
        <>
          <OutcomesTable data={runs.data} />
          <div class="chart-grid">
            <LandedWork data={runs.data} names={names} />
            <FailureReasons data={runs.data} />
          </div>
        </>
      ) : runs.error ? null : (
        <Loading lines={10} />
      )}
      {operator ? (
        <div class="chart-grid">
          {cost.data ? <SpendPanel data={cost.data} names={names} /> : cost.error ? null : <Loading lines={8} />}
          {dispatch.data ? (
            <DispatchPanel data={dispatch.data} />
          ) : dispatch.error ? (
            <ErrorBox error={dispatch.error} title="Could not load dispatch analytics" />
          ) : (
            <Loading lines={8} />
          )}
        </div>
      ) : null}
    </section>
  );
}
