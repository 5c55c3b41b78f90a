// The named agents svc can run: the built-ins plus those defined in the server's agents file
// (SVC_AGENTS_FILE, YAML). A broken file refuses start-up with a message naming the problem.
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { BUILTIN_AGENTS, RUNTIME_IDS, STEERING_CAPABILITIES, type AgentDefinition } from '../core/agents.ts';

const agentFileEntry = z
  .object({
    name: z.string().regex(/^[a-z0-9][a-z0-9._-]*$/, 'lowercase letters, digits, dot, dash, underscore'),
    description: z.string().nullable().default(null),
    runtime: z.enum(RUNTIME_IDS).default('command'),
    command: z.array(z.string().min(1)).min(1),
    env: z.record(z.string(), z.string()).default({}),
    provider: z.string().nullable().default(null),
    model: z.string().nullable().default(null),
    systemPrompt: z.string().nullable().default(null),
    maxCostUsd: z.number().positive().nullable().default(null),
    maxDurationMinutes: z.number().positive().nullable().default(null),
    steering: z.enum(STEERING_CAPABILITIES).nullable().default(null),
  })
  .strict();

const agentsFile = z.object({ agents: z.array(agentFileEntry) }).strict();

export class AgentCatalog {
  readonly #agents = new Map<string, AgentDefinition>();

  constructor(agents: readonly AgentDefinition[]) {
    for (const agent of agents) this.#agents.set(agent.name, agent);
  }

  static load(agentsFilePath: string | undefined): AgentCatalog {
    if (!agentsFilePath) return new AgentCatalog(BUILTIN_AGENTS);
    const parsed = agentsFile.safeParse(parseYaml(readFileSync(agentsFilePath, 'utf8')));
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
      throw new Error(`agents file ${agentsFilePath} is invalid: ${problems}`);
    }
    const configured = parsed.data.agents.map((agent): AgentDefinition => ({ ...agent, source: 'config' }));
    // A configured agent with a built-in's name replaces it.
    return new AgentCatalog([...BUILTIN_AGENTS.filter((b) => !configured.some((c) => c.name === b.name)), ...configured]);
  }

  get(name: string): AgentDefinition | undefined {
    return this.#agents.get(name);
  }

  list(): AgentDefinition[] {
    return [...this.#agents.values()].sort((a, b) => a.name.localeCompare(b.name));
  }
}
