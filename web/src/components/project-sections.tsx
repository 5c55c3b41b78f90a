// The operator-only sections of a project's page: its plans, the plans ready to run, its cron
// triggers and its .svc/ config problems. Each reads its own route and shows its own error: a
// project without a tracker or with a broken clone still shows everything else.
import type { ComponentChildren } from 'preact';
import { query } from '../api/client.ts';
import { type Query, useQuery } from '../api/cache.ts';
import type { ConfigProblem, PlanList, ReadyPlan, ReadyPlans, SvcConfig, Triggers } from '../api/types.ts';
import { relative } from '../format.ts';
import { type Column, DataTable } from './data-table.tsx';
import { Empty, ErrorBox, Loading, StateBadge } from './ui.tsx';

const base = (projectId: string) => `/projects/${encodeURIComponent(projectId)}`;

/** A card for one route's answer: its own error and placeholder, so one failing route spares the rest. */
function QuerySection<D>(props: {
  id: string;
  title: string;
  state: Query<D>;
  failed: string;
  lines: number;
  /** Above the error, shown whatever the route answers. */
  note?: ComponentChildren;
  children(data: D): ComponentChildren;
}) {
  const { state } = props;
  return (
    <section class="card" aria-labelledby={props.id}>
      <h2 id={props.id}>{props.title}</h2>
      {props.note}
      <ErrorBox error={state.error} title={props.failed} />
      {state.loading ? <Loading lines={props.lines} /> : null}
      {state.data ? props.children(state.data) : null}
    </section>
  );
}

type Plan = PlanList['plans'][number];

/** The id and name, then the status: how both plan tables start. */
const PLAN_COLUMNS: Column<{ id: string; name?: string | null; status: string }>[] = [
  {
    label: 'Plan',
    render: (plan) => (
      <>
        <span class="mono">{plan.id}</span>
        {plan.name ? <span class="reason">{plan.name}</span> : null}
      </>
    ),
  },
  { label: 'Status', render: (plan) => <StateBadge state={plan.status} /> },
];

const planRow = (plan: { id: string }) => ({ 'data-plan-id': plan.id });

export function PlansSection({ projectId, hasSeeds, now }: { projectId: string; hasSeeds: boolean; now: number }) {
  // Without a .seeds/ tracker the route can only answer project_lacks_seeds: don't ask.
  const plans = useQuery<PlanList>(hasSeeds ? `${base(projectId)}/seeds/plans` : null);
  const columns: Column<Plan>[] = [
    ...PLAN_COLUMNS,
    { label: 'Children', num: true, render: (plan) => plan.childCount },
    { label: 'Seed', class: 'mono', render: (plan) => plan.seed ?? '—' },
    {
      label: 'Updated',
      title: (plan) => plan.updatedAt,
      render: (plan) => relative(plan.updatedAt ?? plan.createdAt, now),
    },
  ];
  return (
    <QuerySection
      id="plans-title"
      title="Plans"
      state={plans}
      failed="Could not read the plans"
      lines={3}
      note={
        !hasSeeds ? (
          <p class="muted">
            No <code>.seeds/</code> tracker in this project. Initialise one with <code>sd init</code>, push, and
            refresh.
          </p>
        ) : null
      }
    >
      {(data) => (
        <DataTable
          class="plans-table"
          columns={columns}
          rows={data.plans}
          rowKey={(plan) => plan.id}
          row={planRow}
          empty={<Empty>No plans in .seeds/plans.jsonl.</Empty>}
        />
      )}
    </QuerySection>
  );
}

export function ReadyPlansSection(props: { projectId: string; hasSeeds: boolean; operator: boolean }) {
  const { projectId, hasSeeds, operator } = props;
  const ready = useQuery<ReadyPlans>(hasSeeds ? `${base(projectId)}/ready-plans` : null);
  const columns: Column<ReadyPlan>[] = [
    ...PLAN_COLUMNS,
    { label: 'Open children', num: true, render: (plan) => plan.openChildCount },
  ];
  if (operator)
    columns.push({
      label: 'Action',
      render: (plan) => <a href={`/ui/plan-runs${query({ project: projectId, plan: plan.id })}`}>Run this plan</a>,
    });
  return (
    <QuerySection
      id="ready-title"
      title="Ready plans"
      state={ready}
      failed="Could not list the ready plans"
      lines={2}
      note={!hasSeeds ? <p class="muted">None: the project has no tracker.</p> : null}
    >
      {(data) => (
        <DataTable
          class="ready-table"
          columns={columns}
          rows={data.plans}
          rowKey={(plan) => plan.id}
          row={planRow}
          empty={<Empty>No approved plan with open children is waiting.</Empty>}
        />
      )}
    </QuerySection>
  );
}

/** Config problems (parse or schema errors, deprecations) as one list, errors first. */
export function ProblemList({ errors, warnings = [] }: { errors: ConfigProblem[]; warnings?: ConfigProblem[] }) {
  const problems = [
    ...errors.map((problem) => ({ problem, tone: 'bad', label: 'error' })),
    ...warnings.map((problem) => ({ problem, tone: 'warn', label: 'warning' })),
  ];
  return (
    <ul class="stack problems">
      {problems.map(({ problem, tone, label }, index) => (
        <li key={index} data-code={problem.code}>
          <span class={`badge tone-${tone}`}>{label}</span> <code>{problem.file}</code>{' '}
          <span class="muted mono">{problem.code}</span>
          <div>{problem.message}</div>
        </li>
      ))}
    </ul>
  );
}

const triggerColumns = (now: number): Column<Triggers['triggers'][number]>[] => [
  {
    label: 'Trigger',
    render: (trigger) => (
      <>
        <span class="mono">{trigger.id}</span>
        {trigger.parseError ? (
          <span class="reason" role="alert">
            <span class="badge tone-bad">error</span> {trigger.parseError}
          </span>
        ) : null}
      </>
    ),
  },
  {
    label: 'Schedule',
    render: (trigger) => (
      <>
        <code>{trigger.cron}</code>
        <span class="reason">{trigger.timezone ?? 'UTC'}</span>
      </>
    ),
  },
  { label: 'Role', render: (trigger) => trigger.role },
  { label: 'Seed', class: 'mono', render: (trigger) => trigger.seed ?? '—' },
  {
    label: 'Last fired',
    title: (trigger) => trigger.lastFiredAt,
    render: (trigger) => (
      <>
        {trigger.lastFiredAt ? relative(trigger.lastFiredAt, now) : 'never'}
        {trigger.lastRunId ? (
          <a class="reason mono" href={`/ui/runs/${encodeURIComponent(trigger.lastRunId)}`}>
            {trigger.lastRunId}
          </a>
        ) : null}
      </>
    ),
  },
  {
    label: 'Next fire',
    title: (trigger) => trigger.nextFireAt,
    render: (trigger) => relative(trigger.nextFireAt, now),
  },
];

export function TriggersSection({ projectId, now }: { projectId: string; now: number }) {
  const triggers = useQuery<Triggers>(`${base(projectId)}/triggers`);
  return (
    <QuerySection id="triggers-title" title="Triggers" state={triggers} failed="Could not read the triggers" lines={2}>
      {(data) => (
        <>
          {data.errors.length ? <ProblemList errors={data.errors} /> : null}
          <DataTable
            class="triggers-table"
            columns={triggerColumns(now)}
            rows={data.triggers}
            rowKey={(trigger) => trigger.id}
            row={(trigger) => ({ 'data-trigger-id': trigger.id })}
            empty={
              <Empty>
                No cron triggers in <code>.svc/triggers.yaml</code>.
              </Empty>
            }
          />
        </>
      )}
    </QuerySection>
  );
}

export function ConfigSection({ projectId }: { projectId: string }) {
  const config = useQuery<SvcConfig>(`${base(projectId)}/svc-config`);
  return (
    <QuerySection id="config-title" title="svc config" state={config} failed="Could not read .svc/" lines={2}>
      {(data) => (
        <>
          <p class="muted">
            {data.sourceFile ? (
              <>
                Read from <code>{data.sourceFile}</code>.
              </>
            ) : (
              'No .svc/config.yaml: the defaults apply.'
            )}
          </p>
          {data.errors.length === 0 && data.warnings.length === 0 ? (
            <p>No problems.</p>
          ) : (
            <ProblemList errors={data.errors} warnings={data.warnings} />
          )}
        </>
      )}
    </QuerySection>
  );
}
