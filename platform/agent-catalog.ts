// The named agents svc can run: the built-ins plus those defined in the server's agents file
// (SVC_AGENTS_FILE, YAML). A broken file refuses start-up with a message naming the problem.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { FIELD_LIMITS } from '../core/field-limits.ts';
import { BUILTIN_AGENTS, RUNTIME_IDS, STEERING_CAPABILITIES, type AgentDefinition } from '../core/agents.ts';
import { ConfigurationError } from './config-error.ts';

const agentFileEntry = z
  .object({
    name: z
      .string()
      .max(FIELD_LIMITS.name)
      .regex(/^[a-z0-9][a-z0-9._-]*$/, 'lowercase letters, digits, dot, dash, underscore'),
    description: z.string().nullable().default(null),
    runtime: z.enum(RUNTIME_IDS).default('command'),
    command: z.array(z.string().min(1)).min(1),
    env: z.record(z.string(), z.string()).default({}),
    provider: z.string().max(FIELD_LIMITS.name).nullable().default(null),
    model: z.string().max(FIELD_LIMITS.name).nullable().default(null),
    systemPrompt: z.string().nullable().default(null),
    maxCostUsd: z.number().positive().nullable().default(null),
    maxDurationMinutes: z.number().positive().nullable().default(null),
    steering: z.enum(STEERING_CAPABILITIES).nullable().default(null),
  })
  .strict();

const agentsFile = z.object({ agents: z.array(agentFileEntry) }).strict();

export class AgentDefinitionError extends Error {}

export class AgentCatalog {
  readonly #agents = new Map<string, AgentDefinition>();

  constructor(agents: readonly AgentDefinition[]) {
    for (const agent of agents) this.#agents.set(agent.name, agent);
  }

  /** The built-ins plus the agents file's; a broken file is a ConfigurationError naming the file and field. */
  static load(agentsFilePath: string | undefined): AgentCatalog {
    if (!agentsFilePath) return new AgentCatalog(BUILTIN_AGENTS);
    const where = `SVC_AGENTS_FILE ${agentsFilePath}`;
    let text: string;
    try {
      text = readFileSync(agentsFilePath, 'utf8');
    } catch (error) {
      throw new ConfigurationError(`${where}: cannot be read (${(error as NodeJS.ErrnoException).code ?? error})`);
    }
    let raw: unknown;
    try {
      raw = parseYaml(text);
    } catch (error) {
      throw new ConfigurationError(
        `${where}: not valid YAML: ${(error as Error).message.split('\n')[0]!.replace(/:$/, '')}`,
      );
    }
    const parsed = agentsFile.safeParse(raw);
    if (!parsed.success) throw new ConfigurationError(`${where}: ${describeIssues(parsed.error.issues, raw)}`);
    const configured = parsed.data.agents.map((agent): AgentDefinition => ({ ...agent, source: 'config' }));
    // A configured agent with a built-in's name replaces it.
    return new AgentCatalog([
      ...BUILTIN_AGENTS.filter((b) => !configured.some((c) => c.name === b.name)),
      ...configured,
    ]);
  }

  /**
   * This catalog plus the project's own agents, one YAML file each in `.svc/agents/` (same fields as
   * an entry of the agents file; the name defaults to the file name). A project agent with a
   * server agent's name replaces it for that project. A broken file is an error naming it.
   */
  withProjectAgents(repoDir: string): AgentCatalog {
    const dir = join(repoDir, '.svc', 'agents');
    if (!existsSync(dir)) return this;
    const project = readdirSync(dir)
      .filter((file) => /\.ya?ml$/.test(file))
      .sort()
      .map((file): AgentDefinition => {
        const raw = parseYaml(readFileSync(join(dir, file), 'utf8')) as Record<string, unknown> | null;
        const parsed = agentFileEntry.safeParse({ name: file.replace(/\.ya?ml$/, ''), ...raw });
        if (!parsed.success) {
          throw new AgentDefinitionError(`.svc/agents/${file} is invalid: ${describeIssues(parsed.error.issues, raw)}`);
        }
        return { ...parsed.data, source: 'project' };
      });
    return new AgentCatalog([
      ...this.list().filter((agent) => !project.some((own) => own.name === agent.name)),
      ...project,
    ]);
  }

  get(name: string): AgentDefinition | undefined {
    return this.#agents.get(name);
  }

  list(): AgentDefinition[] {
    return [...this.#agents.values()].sort((a, b) => a.name.localeCompare(b.name));
  }
}

/** Zod's issues as one line: each field's path, what it holds and, for a choice, the allowed values. */
function describeIssues(issues: readonly z.core.$ZodIssue[], raw: unknown): string {
  return issues
    .map((issue) => {
      const path = issue.path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`)).join('');
      const field = path.replace(/^\./, '') || '(top level)';
      if (issue.code === 'invalid_value')
        return (
          `${field}: ${JSON.stringify(valueAt(raw, issue.path))} is not allowed (allowed: ` +
          `${issue.values.join(', ')})`
        );
      if (issue.code === 'unrecognized_keys') return `${field}: unknown field(s) ${issue.keys.join(', ')}`;
      return `${field}: ${issue.message}`;
    })
    .join('; ');
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  return path.reduce<unknown>((value, key) => (value as Record<PropertyKey, unknown> | null)?.[key], raw);
}
