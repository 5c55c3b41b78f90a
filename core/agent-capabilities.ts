// What each runtime can do and what it reads, in one place: the API presents it (GET /agents), the
// runtime adapters (activities/runtimes/) act on it. Pure data and rules.
import type { AgentDefinition, RuntimeId, SteeringCapability } from './agents.ts';
import type { CostBasis } from './run-states.ts';

/** The model credentials each runtime takes from svc's environment into its sandbox (names, never values). */
export const RUNTIME_CREDENTIALS: Record<RuntimeId, readonly string[]> = {
  command: [],
  'claude-code': ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN'],
  codex: ['OPENAI_API_KEY', 'CODEX_API_KEY'],
  opencode: ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'OPENCODE_API_KEY'],
  // Its own env, or the project's run secrets: svc passes it nothing of its own.
  acp: [],
};

/** The runtimes svc can deliver steering to while the agent works (Claude Code's input, ACP turns). */
const MID_RUN_RUNTIMES: readonly RuntimeId[] = ['claude-code', 'acp'];

/**
 * How an agent takes steering: as its definition declares (a command agent may read its inbox
 * itself), else its runtime's way: `mid-run` where svc has a way in while it works (Claude Code's
 * input, ACP turns), `spawn-only` (messages folded into the prompt before it starts) for the rest.
 */
export function agentSteering(agent: Pick<AgentDefinition, 'runtime' | 'steering'>): SteeringCapability {
  if (agent.steering) return agent.steering;
  return MID_RUN_RUNTIMES.includes(agent.runtime) ? 'mid-run' : 'spawn-only';
}

/** A Claude Code subscription credential without an API key makes the cost Claude Code reports an estimate. */
export function runtimeCostBasis(runtime: RuntimeId, env: NodeJS.ProcessEnv): CostBasis {
  if (runtime === 'claude-code' && env.CLAUDE_CODE_OAUTH_TOKEN && !env.ANTHROPIC_API_KEY)
    return 'subscription_estimate';
  return 'api';
}
