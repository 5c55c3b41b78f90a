// The runs list: server-side filters and paging (the URL holds them, so a view can be shared),
// kept current by the lifecycle stream through the cache.
import { useLocation } from 'preact-iso';
import { query } from '../api/client.ts';
import { useQuery } from '../api/cache.ts';
import { identity } from '../api/identity.ts';
import type { AgentList, ProjectList, RunList } from '../api/types.ts';
import { Empty, ErrorBox, Loading, PageHeader, Pager, StateBadge } from '../components/ui.tsx';
import { useNow, useTitle } from '../components/hooks.ts';
import { money, relative, span, tokens, httpUrl } from '../format.ts';
import { projectName } from './project-name.ts';

const PAGE_SIZE = 50;
const STATE_FILTERS: [string, string][] = [
  ['', 'Any state'],
  ['queued,running', 'Active'],
  ['queued', 'Queued'],
  ['running', 'Running'],
  ['succeeded', 'Succeeded'],
  ['failed', 'Failed'],
  ['cancelled', 'Cancelled'],
];

export function RunsPage() {
  useTitle('Runs');
  const { query: params, route, path } = useLocation();
  const offset = Math.max(0, Number(params.offset ?? 0) || 0);
  const filters = { state: params.state, project: params.project, agent: params.agent, sort: params.sort };
  const runs = useQuery<RunList>(`/runs${query({ ...filters, limit: PAGE_SIZE, offset })}`);
  const projects = useQuery<ProjectList>('/projects');
  const agents = useQuery<AgentList>('/agents');
  const anyRunning = Boolean(runs.data?.runs.some((run) => run.state === 'running'));
  const now = useNow(anyRunning);
  const base = path === '/' ? '/ui/runs' : path;
  const href = (changes: Record<string, string | number | undefined>) =>
    `${base}${query({ ...filters, offset, ...changes })}`;
  const setFilter = (name: string, value: string) => route(href({ [name]: value || undefined, offset: undefined }));
  const operator = identity.value.kind === 'operator';

  return (
    <section>
      <PageHeader title="Runs">
        {operator ? (
          <a class="button primary" href="/ui/dispatch">
            New run
          </a>
        ) : null}
      </PageHeader>
      <form class="filters" onSubmit={(event) => event.preventDefault()} aria-label="Filter runs">
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
          <select
            value={filters.project ?? ''}
            onChange={(event) =>
              route(href({ project: event.currentTarget.value || undefined, agent: undefined, offset: undefined }))
            }
          >
            <option value="">Any project</option>
            {projects.data?.projects.map((project) => (
              <option key={project.id} value={project.id}>
                {projectName(project.gitUrl)}
              </option>
            ))}
          </select>
        </label>
        <label>
          Agent
          <select
            value={filters.agent ?? ''}
            onChange={(event) =>
              route(href({ agent: event.currentTarget.value || undefined, project: undefined, offset: undefined }))
            }
          >
            <option value="">Any agent</option>
            {agents.data?.agents.map((agent) => (
              <option key={agent.name} value={agent.name}>
                {agent.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Sort
          <select
            value={filters.sort ?? 'started'}
            onChange={(event) =>
              setFilter('sort', event.currentTarget.value === 'started' ? '' : event.currentTarget.value)
            }
          >
            <option value="started">Newest</option>
            <option value="cost">Costliest</option>
          </select>
        </label>
      </form>
      <ErrorBox error={runs.error} title="Could not list runs" />
      {runs.loading ? <Loading lines={8} /> : null}
      {runs.data ? (
        runs.data.runs.length === 0 ? (
          <Empty>No runs match. {operator ? <a href="/ui/dispatch">Dispatch one</a> : null}</Empty>
        ) : (
          <>
            <table class="table runs-table">
              <thead>
                <tr>
                  <th scope="col">Run</th>
                  <th scope="col">State</th>
                  <th scope="col">Agent</th>
                  <th scope="col">Project</th>
                  <th scope="col">Prompt</th>
                  <th scope="col" class="num">
                    Cost
                  </th>
                  <th scope="col" class="num">
                    Tokens
                  </th>
                  <th scope="col">Started</th>
                  <th scope="col" class="num">
                    Duration
                  </th>
                  <th scope="col">PR</th>
                </tr>
              </thead>
              <tbody>
                {runs.data.runs.map((run) => {
                  const project = projects.data?.projects.find((candidate) => candidate.id === run.projectId);
                  return (
                    <tr key={run.id} data-run-id={run.id} data-state={run.state}>
                      <td data-label="Run">
                        <a href={`/ui/runs/${encodeURIComponent(run.id)}`} class="mono">
                          {run.id}
                        </a>
                      </td>
                      <td data-label="State">
                        <StateBadge state={run.state} />
                        {run.failureReason ? <span class="reason">{run.failureReason.replace(/_/g, ' ')}</span> : null}
                        {run.queueReason ? (
                          <span class="reason" title={run.queueReason}>
                            waiting for a slot
                          </span>
                        ) : null}
                      </td>
                      <td data-label="Agent">{run.agentName}</td>
                      <td data-label="Project" title={run.projectId ?? undefined}>
                        {project ? projectName(project.gitUrl) : (run.projectId ?? '—')}
                      </td>
                      <td data-label="Prompt" class="prompt-cell" title={run.prompt}>
                        <span class="clamp">{run.prompt || <span class="muted">hidden</span>}</span>
                      </td>
                      <td data-label="Cost" class="num">
                        {money(run.costUsd, run.costBasis === 'subscription_estimate')}
                      </td>
                      <td data-label="Tokens" class="num">
                        {tokens(run)}
                      </td>
                      <td data-label="Started">{relative(run.startedAt ?? run.createdAt, now)}</td>
                      <td data-label="Duration" class="num">
                        {run.startedAt ? span(run.startedAt, run.endedAt) : '—'}
                      </td>
                      <td data-label="PR">
                        {run.prUrl ? (
                          <a href={httpUrl(run.prUrl)} target="_blank" rel="noopener noreferrer">
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
            <Pager
              offset={offset}
              limit={PAGE_SIZE}
              total={runs.data.total}
              href={(next) => href({ offset: next || undefined })}
            />
            {runs.data.costTotalUsd !== null ? (
              <p class="muted">
                Cost of the {runs.data.costPricedCount} priced runs that match: {money(runs.data.costTotalUsd)}
              </p>
            ) : null}
          </>
        )
      ) : null}
    </section>
  );
}
