// Agent definitions: what a named agent is and how its process is launched. Pure data; loading
// the configuration file lives in platform/agent-catalog.ts.

export const STEERING_CAPABILITIES = ['mid-run', 'spawn-only', 'none'] as const;
export type SteeringCapability = (typeof STEERING_CAPABILITIES)[number];

export const RUNTIME_IDS = ['command', 'claude-code', 'codex', 'opencode', 'acp'] as const;
export type RuntimeId = (typeof RUNTIME_IDS)[number];

export interface AgentDefinition {
  name: string;
  description: string | null;
  runtime: RuntimeId;
  /**
   * argv of the agent process (for claude-code: the CLI itself, e.g. ["claude"], looked up in svc's
   * node_modules/.bin first); the prompt arrives on stdin.
   */
  command: string[];
  env: Record<string, string>;
  provider: string | null;
  model: string | null;
  systemPrompt: string | null;
  maxCostUsd: number | null;
  maxDurationMinutes: number | null;
  steering: SteeringCapability | null;
  source: 'builtin' | 'config' | 'project';
}

const builtin = (
  agent: Pick<AgentDefinition, 'name' | 'description' | 'runtime' | 'command'> & Partial<AgentDefinition>,
): AgentDefinition => ({
  env: {},
  provider: null,
  model: null,
  systemPrompt: null,
  maxCostUsd: null,
  maxDurationMinutes: null,
  steering: 'spawn-only',
  source: 'builtin',
  ...agent,
});

export const BUILTIN_AGENTS: readonly AgentDefinition[] = [
  builtin({
    name: 'shell',
    description: 'Runs the prompt as a bash script inside the workspace: the plain-command agent.',
    runtime: 'command',
    command: ['bash', '-s'],
  }),
  builtin({
    name: 'claude-code',
    description:
      'Claude Code (@anthropic-ai/claude-code) in print mode, steerable while it works; ' +
      'installed with svc; needs ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN.',
    runtime: 'claude-code',
    command: ['claude'],
    provider: 'anthropic',
    // svc's steering relay writes messages into its stream-json input (sandbox/inside/steering-relay.ts).
    steering: 'mid-run',
  }),
  builtin({
    name: 'codex',
    description: 'OpenAI Codex (@openai/codex) as `codex exec --json`, installed with svc; needs OPENAI_API_KEY.',
    runtime: 'codex',
    command: ['codex'],
    provider: 'openai',
  }),
  builtin({
    name: 'opencode',
    description:
      "OpenCode (opencode-ai) as `opencode run --format json`, installed with svc; needs the chosen provider's key.",
    runtime: 'opencode',
    command: ['opencode'],
    provider: 'anthropic',
  }),
];

export interface DispatchOverrides {
  providerOverride: string | null;
  modelOverride: string | null;
  maxCostUsd: number | null;
}

/** The definition frozen on a run: the agent with the dispatch overrides folded in. */
export function renderAgent(agent: AgentDefinition, overrides: DispatchOverrides): AgentDefinition {
  return {
    ...agent,
    provider: overrides.providerOverride ?? agent.provider,
    model: overrides.modelOverride ?? agent.model,
    maxCostUsd: overrides.maxCostUsd ?? agent.maxCostUsd,
  };
}
