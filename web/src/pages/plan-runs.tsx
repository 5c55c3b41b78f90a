// The plan-runs list, filtered by project and state (the URL holds them, so a view can be shared) and
// kept current by the lifecycle stream through the cache; operators dispatch new ones from here.
// ?project=<id>&plan=<planId> (a project page's link) opens the form filled in.
import { useLocation } from 'preact-iso';
import { query } from '../api/client.ts';
import { useQuery } from '../api/cache.ts';
import { identity } from '../api/identity.ts';
import type { PlanRunList, ProjectList } from '../api/types.ts';
import { PlanRunForm } from '../components/plan-run-form.tsx';
import { Empty, ErrorBox, Loading, PageHeader, StateBadge } from '../components/ui.tsx';
import { useNow, useTitle } from '../components/hooks.ts';
import { relative, span } from '../format.ts';
import { projectName } from './project-name.ts';

const STATE_FILTERS: [string, string][] = [
  ['', 'Any state'],
  ['active', 'Active'],
  ['queued', 'Queued'],
  ['running', 'Running'],
  ['succeeded', 'Succeeded'],
  ['failed', 'Failed'],
  ['cancelled', 'Cancelled'],
];

export function PlanRunsPage() {
  useTitle('Plan-runs');
  const { query: params, route, path } = useLocation();
  const filters = { project: params.project, state: params.state };
  const list = useQuery<PlanRunList>(`/plan-runs${query(filters)}`);
  const projects = useQuery<ProjectList>('/projects');
  const anyRunning = Boolean(list.data?.planRuns.some((planRun) => planRun.state === 'running'));
  const now = useNow(anyRunning);
  // Changing a filter drops ?plan=: the form keeps what it holds, the URL stops claiming a pre-fill.
  const setFilter = (name: string, value: string) =>
    route(`${path}${query({ ...filters, [name]: value || undefined })}`);
  const operator = identity.value.kind === 'operator';
  const nameOf = (projectId: string) => {
    const project = projects.data?.projects.find((candidate) => candidate.id === projectId);
    return project ? projectName(project.gitUrl) : projectId;
  };

  return (
    <section>
      <PageHeader title="Plan-runs" />
      {operator ? (
        <details class="card new-plan-run" open={Boolean(params.plan)}>
          <summary>New plan-run</summary>
          <PlanRunForm project={params.project} plan={params.plan} />
        </details>
      ) : null}
      <form class="filters" onSubmit={(event) => event.preventDefault()} aria-label="Filter plan-runs">
        <label>
          State
          <select value={filters.state ?? ''} onChange={(event) => setFilter('state', event.currentTarget.value)}>
            {STATE_FILTERS.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Project
          <select value={filters.project ?? ''} onChange={(event) => setFilter('project', event.currentTarget.value)}>
            <option value="">Any project</option>
            {projects.data?.projects.map((project) => (
              <option key={project.id} value={project.id}>
                {projectName(project.gitUrl)}
              </option>
            ))}
          </select>
        </label>
      </form>
      <ErrorBox error={list.error} title="Could not list plan-runs" />
      {list.loading ? <Loading lines={8} /> : null}
      {list.data ? (
        list.data.planRuns.length === 0 ? (
          <Empty>No plan-runs match.</Empty>
        ) : (
          <table class="table plan-runs-table">
            <thead>
              <tr>
                <th scope="col">Plan-run</th>
                <th scope="col">State</th>
                <th scope="col">Project</th>
                <th scope="col">Agent</th>
                <th scope="col">Source</th>
                <th scope="col">Created</th>
                <th scope="col" class="num">
                  Duration
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.planRuns.map((planRun) => (
                <tr key={planRun.id} data-plan-run-id={planRun.id} data-state={planRun.state}>
                  <td data-label="Plan-run">
                    <a href={`/ui/plan-runs/${encodeURIComponent(planRun.id)}`} class="mono">
                      {planRun.id}
                    </a>
                  </td>
                  <td data-label="State">
                    <StateBadge state={planRun.state} />
                    {'failureReason' in planRun && planRun.failureReason ? (
                      <span class="reason">{planRun.failureReason.replace(/_/g, ' ')}</span>
                    ) : null}
                  </td>
                  <td data-label="Project">{nameOf(planRun.projectId)}</td>
                  <td data-label="Agent">{planRun.agentName}</td>
                  <td data-label="Source">
                    {planRun.source === 'plan' ? <span class="mono">{planRun.planId ?? 'plan'}</span> : 'issues'}
                  </td>
                  <td data-label="Created" title={planRun.createdAt}>
                    {relative(planRun.createdAt, now)}
                  </td>
                  <td data-label="Duration" class="num">
                    {planRun.startedAt ? span(planRun.startedAt, planRun.endedAt) : '—'}
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
