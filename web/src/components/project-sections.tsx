// The operator-only sections of a project's page: its plans, the plans ready to run, its cron
// triggers and its .svc/ config problems. Each reads its own route and shows its own error: a
// project without a tracker or with a broken clone still shows everything else.
import { query } from '../api/client.ts';
import { useQuery } from '../api/cache.ts';
import type { ConfigProblem, PlanList, ReadyPlans, SvcConfig, Triggers } from '../api/types.ts';
import { relative } from '../format.ts';
import { Empty, ErrorBox, Loading, StateBadge } from './ui.tsx';

const base = (projectId: string) => `/projects/${encodeURIComponent(projectId)}`;

export function PlansSection({ projectId, hasSeeds, now }: { projectId: string; hasSeeds: boolean; now: number }) {
  // Without a .seeds/ tracker the route can only answer project_lacks_seeds: don't ask.
  const plans = useQuery<PlanList>(hasSeeds ? `${base(projectId)}/seeds/plans` : null);
  return (
    <section class="card" aria-labelledby="plans-title">
      <h2 id="plans-title">Plans</h2>
      {!hasSeeds ? (
        <p class="muted">
          No <code>.seeds/</code> tracker in this project. Initialise one with <code>sd init</code>, push, and refresh.
        </p>
      ) : null}
      <ErrorBox error={plans.error} title="Could not read the plans" />
      {plans.loading ? <Loading lines={3} /> : null}
      {plans.data ? (
        plans.data.plans.length === 0 ? (
          <Empty>No plans in .seeds/plans.jsonl.</Empty>
        ) : (
          <table class="table plans-table">
            <thead>
              <tr>
                <th scope="col">Plan</th>
                <th scope="col">Status</th>
                <th scope="col" class="num">
                  Children
                </th>
                <th scope="col">Seed</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {plans.data.plans.map((plan) => (
                <tr key={plan.id} data-plan-id={plan.id}>
                  <td data-label="Plan">
                    <span class="mono">{plan.id}</span>
                    {plan.name ? <span class="reason">{plan.name}</span> : null}
                  </td>
                  <td data-label="Status">
                    <StateBadge state={plan.status} />
                  </td>
                  <td data-label="Children" class="num">
                    {plan.childCount}
                  </td>
                  <td data-label="Seed" class="mono">
                    {plan.seed ?? '—'}
                  </td>
                  <td data-label="Updated" title={plan.updatedAt}>
                    {relative(plan.updatedAt ?? plan.createdAt, now)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )
      ) : null}
    </section>
  );
}

export function ReadyPlansSection(props: { projectId: string; hasSeeds: boolean; operator: boolean }) {
  const { projectId, hasSeeds, operator } = props;
  const ready = useQuery<ReadyPlans>(hasSeeds ? `${base(projectId)}/ready-plans` : null);
  return (
    <section class="card" aria-labelledby="ready-title">
      <h2 id="ready-title">Ready plans</h2>
      {!hasSeeds ? <p class="muted">None: the project has no tracker.</p> : null}
      <ErrorBox error={ready.error} title="Could not list the ready plans" />
      {ready.loading ? <Loading lines={2} /> : null}
      {ready.data ? (
        ready.data.plans.length === 0 ? (
          <Empty>No approved plan with open children is waiting.</Empty>
        ) : (
          <table class="table ready-table">
            <thead>
              <tr>
                <th scope="col">Plan</th>
                <th scope="col">Status</th>
                <th scope="col" class="num">
                  Open children
                </th>
                {operator ? <th scope="col">Action</th> : null}
              </tr>
            </thead>
            <tbody>
              {ready.data.plans.map((plan) => (
                <tr key={plan.id} data-plan-id={plan.id}>
                  <td data-label="Plan">
                    <span class="mono">{plan.id}</span>
                    {plan.name ? <span class="reason">{plan.name}</span> : null}
                  </td>
                  <td data-label="Status">
                    <StateBadge state={plan.status} />
                  </td>
                  <td data-label="Open children" class="num">
                    {plan.openChildCount}
                  </td>
                  {operator ? (
                    <td data-label="Action">
                      <a href={`/ui/plan-runs${query({ project: projectId, plan: plan.id })}`}>Run this plan</a>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        )
      ) : null}
    </section>
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

export function TriggersSection({ projectId, now }: { projectId: string; now: number }) {
  const triggers = useQuery<Triggers>(`${base(projectId)}/triggers`);
  return (
    <section class="card" aria-labelledby="triggers-title">
      <h2 id="triggers-title">Triggers</h2>
      <ErrorBox error={triggers.error} title="Could not read the triggers" />
      {triggers.loading ? <Loading lines={2} /> : null}
      {triggers.data?.errors.length ? <ProblemList errors={triggers.data.errors} /> : null}
      {triggers.data ? (
        triggers.data.triggers.length === 0 ? (
          <Empty>
            No cron triggers in <code>.svc/triggers.yaml</code>.
          </Empty>
        ) : (
          <table class="table triggers-table">
            <thead>
              <tr>
                <th scope="col">Trigger</th>
                <th scope="col">Schedule</th>
                <th scope="col">Role</th>
                <th scope="col">Seed</th>
                <th scope="col">Last fired</th>
                <th scope="col">Next fire</th>
              </tr>
            </thead>
            <tbody>
              {triggers.data.triggers.map((trigger) => (
                <tr key={trigger.id} data-trigger-id={trigger.id}>
                  <td data-label="Trigger">
                    <span class="mono">{trigger.id}</span>
                    {trigger.parseError ? (
                      <span class="reason" role="alert">
                        <span class="badge tone-bad">error</span> {trigger.parseError}
                      </span>
                    ) : null}
                  </td>
                  <td data-label="Schedule">
                    <code>{trigger.cron}</code>
                    <span class="reason">{trigger.timezone ?? 'UTC'}</span>
                  </td>
                  <td data-label="Role">{trigger.role}</td>
                  <td data-label="Seed" class="mono">
                    {trigger.seed ?? '—'}
                  </td>
                  <td data-label="Last fired" title={trigger.lastFiredAt ?? undefined}>
                    {trigger.lastFiredAt ? relative(trigger.lastFiredAt, now) : 'never'}
                    {trigger.lastRunId ? (
                      <a class="reason mono" href={`/ui/runs/${encodeURIComponent(trigger.lastRunId)}`}>
                        {trigger.lastRunId}
                      </a>
                    ) : null}
                  </td>
                  <td data-label="Next fire" title={trigger.nextFireAt ?? undefined}>
                    {relative(trigger.nextFireAt, now)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )
      ) : null}
    </section>
  );
}

export function ConfigSection({ projectId }: { projectId: string }) {
  const config = useQuery<SvcConfig>(`${base(projectId)}/svc-config`);
  const data = config.data;
  return (
    <section class="card" aria-labelledby="config-title">
      <h2 id="config-title">svc config</h2>
      <ErrorBox error={config.error} title="Could not read .svc/" />
      {config.loading ? <Loading lines={2} /> : null}
      {data ? (
        <>
          <p class="muted">
            {data.sourceFile ? (
              <>
                Read from <code>{data.sourceFile}</code>.
              </>
            ) : (
              'No .svc/ configuration: the defaults apply.'
            )}
          </p>
          {data.errors.length === 0 && data.warnings.length === 0 ? (
            <p>No problems.</p>
          ) : (
            <ProblemList errors={data.errors} warnings={data.warnings} />
          )}
        </>
      ) : null}
    </section>
  );
}
