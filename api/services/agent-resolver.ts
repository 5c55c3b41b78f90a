// The one rule for naming an agent in a dispatch (runs, trigger runs, plan-runs): the server's
// catalogue, plus the project's own agents (.svc/agents/) when the dispatch has a project.
import type { AgentDefinition } from '../../core/agents.ts';
import { AgentDefinitionError, type AgentCatalog } from '../../platform/agent-catalog.ts';
import { Errors } from '../errors.ts';

/** The agent called `name`: 404 when there is none, 422 when the project's agent file is broken. */
export function resolveAgent(catalog: AgentCatalog, name: string, projectDir?: string): AgentDefinition {
  let agent: AgentDefinition | undefined;
  try {
    agent = (projectDir ? catalog.withProjectAgents(projectDir) : catalog).get(name);
  } catch (error) {
    if (error instanceof AgentDefinitionError) throw Errors.agentSchemaError(error.message);
    throw error;
  }
  if (!agent) throw Errors.notFound(`agent "${name}"`, 'GET /agents (svc agents) lists the agents this server knows');
  return agent;
}
