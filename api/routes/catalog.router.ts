// Agents and the forge: what the server can run, and which repositories it can see.
import { z } from 'zod';
import { FIELD_LIMITS } from '../../core/field-limits.ts';
import { agentSteering, RUNTIME_CREDENTIALS, runtimeCostBasis } from '../../core/agent-capabilities.ts';
import type { AgentDefinition } from '../../core/agents.ts';
import type { GitHubForge } from '../../activities/forge/github-forge.ts';
import type { AgentCatalog } from '../../platform/agent-catalog.ts';
import { Errors } from '../errors.ts';
import type { Identity } from '../auth.ts';
import { defineRoute } from '../route.ts';
import { forgeReposResponse } from './projects.schema.ts';
import { agentSchema, agentsResponse } from './catalog.schema.ts';

/** Spectators (public mode) do not see the definition itself: its env, command and system prompt. */
function presentAgent(agent: AgentDefinition, loadedAt: string, identity: Identity | undefined) {
  return {
    name: agent.name,
    description: agent.description,
    provider: agent.provider,
    model: agent.model,
    source: agent.source,
    runtime: agent.runtime,
    steering: agentSteering(agent),
    costBasis: runtimeCostBasis(agent.runtime, process.env),
    credentials: [...RUNTIME_CREDENTIALS[agent.runtime]],
    renderedJson: identity?.kind === 'anonymous' ? null : agent,
    registeredAt: loadedAt,
    lastRefreshed: loadedAt,
  };
}

export function catalogRoutes(agents: AgentCatalog, forge: GitHubForge) {
  const loadedAt = new Date().toISOString();
  return [
    defineRoute({
      method: 'get',
      path: '/agents',
      auth: 'readPublic',
      summary: 'The agents this server can run',
      tags: ['agents'],
      responses: { 200: { description: 'Agents', schema: agentsResponse } },
      handler: async ({ identity }) => ({
        status: 200,
        body: { agents: agents.list().map((agent) => presentAgent(agent, loadedAt, identity)) },
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/agents/{name}',
      auth: 'readPublic',
      summary: 'One agent',
      tags: ['agents'],
      params: z.object({ name: z.string().min(1).max(FIELD_LIMITS.name) }).strict(),
      responses: { 200: { description: 'The agent', schema: agentSchema } },
      handler: async ({ params, identity }) => {
        const agent = agents.get(params.name);
        if (!agent)
          throw Errors.notFound(
            `agent "${params.name}"`,
            'GET /agents (svc agents) lists the agents this server knows',
          );
        return { status: 200, body: presentAgent(agent, loadedAt, identity) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/forge/repos',
      auth: 'readOperator',
      summary: 'Repositories the forge credentials can see',
      tags: ['forge'],
      responses: { 200: { description: 'Repositories', schema: forgeReposResponse } },
      handler: async () => {
        if (!forge.supported) return { status: 200, body: { supported: false, repos: [] } };
        const listed = await forge.listRepos().then(
          (repos) => ({ supported: true, repos }),
          (error: Error) => ({ supported: true, repos: [], error: error.message }),
        );
        return { status: 200, body: listed };
      },
    }),
  ];
}
