// The agents this server knows (built in, from config, or from a project), and for the operator
// each one's rendered definition and a shortcut to dispatch it.
import { useQuery } from '../api/cache.ts';
import { query } from '../api/client.ts';
import { identity } from '../api/identity.ts';
import type { Agent, AgentList } from '../api/types.ts';
import { Empty, ErrorBox, Loading, PageHeader } from '../components/ui.tsx';
import { useTitle } from '../components/hooks.ts';

const SOURCE_TONES: Record<Agent['source'], string> = { builtin: 'neutral', config: 'info', project: 'good' };

export function AgentsPage() {
  useTitle('Agents');
  const agents = useQuery<AgentList>('/agents');
  const operator = identity.value.kind === 'operator';

  return (
    <section>
      <PageHeader title="Agents" />
      <ErrorBox error={agents.error} title="Could not list agents" />
      {agents.loading ? <Loading lines={6} /> : null}
      {agents.data ? (
        agents.data.agents.length === 0 ? (
          <Empty>No agents are defined.</Empty>
        ) : (
          <table class="table agents-table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Description</th>
                <th scope="col">Provider</th>
                <th scope="col">Model</th>
                <th scope="col">Source</th>
                {operator ? <th scope="col">Actions</th> : null}
              </tr>
            </thead>
            <tbody>
              {agents.data.agents.map((agent) => (
                <tr key={agent.name} data-agent={agent.name}>
                  <td data-label="Name" class="mono">
                    {agent.name}
                  </td>
                  <td data-label="Description">
                    {agent.description ?? <span class="muted">—</span>}
                    {/* Spectators get null here: their view leaves the definition out. */}
                    {operator && agent.renderedJson !== null && agent.renderedJson !== undefined ? (
                      <details class="definition">
                        <summary>Definition</summary>
                        <pre>{JSON.stringify(agent.renderedJson, null, 2)}</pre>
                      </details>
                    ) : null}
                  </td>
                  <td data-label="Provider">{agent.provider ?? <span class="muted">—</span>}</td>
                  <td data-label="Model" class="mono">
                    {agent.model ?? <span class="muted">—</span>}
                  </td>
                  <td data-label="Source">
                    <span class={`badge tone-${SOURCE_TONES[agent.source]}`}>{agent.source}</span>
                  </td>
                  {operator ? (
                    <td data-label="Actions">
                      <a href={`/ui/dispatch${query({ agent: agent.name })}`} aria-label={`Dispatch ${agent.name}`}>
                        Dispatch
                      </a>
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
