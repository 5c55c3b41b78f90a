// A runtime adapter turns an agent definition into a process launch, and that process's output
// lines into run events, usage (tokens, cost) and provider errors. Its state is plain JSON, kept in
// the supervising activity's heartbeat, so a new worker resumes parsing where the last one stopped.
import type { AgentDefinition } from '../../core/agents.ts';
import type { RunEventKind } from '../../core/event-kinds.ts';
import type { CostBasis, EventStream } from '../../core/run-states.ts';
import { FIELD_LIMITS } from '../../core/field-limits.ts';
import type { McpServer } from '../../core/mcp-servers.ts';
import type { LaunchSpec } from '../../sandbox/index.ts';

export interface LaunchContext {
  runId: string;
  prompt: string;
  workspacePath: string;
  hostEnv: NodeJS.ProcessEnv;
  /** The project's secrets for this run (core/project-secrets.ts): under everything svc and the agent set. */
  projectEnv?: Record<string, string>;
  /** The project's `repoContext`: what a model-driven agent reads before its task. */
  repoContext?: string | null;
  /**
   * The MCP servers of the run's environment, their secrets put in (core/mcp-servers.ts): a runtime
   * that takes them hands them to its agent through its argv or environment, never a workspace file.
   */
  mcpServers?: McpServer[];
}

export interface Usage {
  costUsd: number | null;
  tokensInput: number | null;
  tokensOutput: number | null;
  tokensCacheRead: number | null;
  tokensCacheWrite: number | null;
}

/** The most a run may claim to have cost: agents report their own usage, and are hostile. */
export const MAX_REPORTED_COST_USD = 1_000_000;
/** The most tokens of a kind a run may claim. */
export const MAX_REPORTED_TOKENS = 1_000_000_000_000;

/** Within [0, max]; a non-finite claim (NaN, Infinity) counts as the most. */
function within(value: number | null, max: number): number | null {
  if (value === null) return null;
  return Number.isFinite(value) ? Math.min(Math.max(value, 0), max) : max;
}
const tokens = (value: number | null) => {
  const bounded = within(value, MAX_REPORTED_TOKENS);
  return bounded === null ? null : Math.round(bounded);
};

/**
 * Usage as svc records it: what the agent claimed, held within bounds, so that no claim breaks a
 * total it is added to (the read model's run_totals, analytics sums).
 */
export function boundedUsage(usage: Usage | null): Usage | null {
  if (!usage) return null;
  return {
    costUsd: within(usage.costUsd, MAX_REPORTED_COST_USD),
    tokensInput: tokens(usage.tokensInput),
    tokensOutput: tokens(usage.tokensOutput),
    tokensCacheRead: tokens(usage.tokensCacheRead),
    tokensCacheWrite: tokens(usage.tokensCacheWrite),
  };
}

export interface RuntimeState {
  /** The model said something (text, thinking or a tool call). */
  modelOutput: boolean;
  usage: Usage | null;
  providerError: string | null;
  /** The model the agent says it runs (absent from heartbeats recorded before svc read it). */
  model?: string | null;
}

export interface ParsedLine {
  /** `log.stdout`/`log.stderr` for plain text, `agent.<type>` for a line the runtime understood. */
  kind: RunEventKind;
  payload: unknown;
}

export interface RuntimeAdapter {
  buildLaunch(agent: AgentDefinition, context: LaunchContext): LaunchSpec;
  costBasis(hostEnv: NodeJS.ProcessEnv): CostBasis;
  /** The model API origins the agent must reach (its sandbox's built-in egress allowlist). */
  modelEndpoints(hostEnv: NodeJS.ProcessEnv): string[];
  /** Parses one output line, updating the state in place. */
  parseLine(stream: EventStream, text: string, state: RuntimeState): ParsedLine;
}

export const initialRuntimeState = (): RuntimeState => ({
  modelOutput: false,
  usage: null,
  providerError: null,
  model: null,
});

/**
 * Records the model an agent names, as svc keeps it: a short printable name (the run's `model`
 * column holds FIELD_LIMITS.name), or nothing. Agents are hostile: anything else is ignored.
 */
export function noteReportedModel(state: RuntimeState, value: unknown): void {
  if (typeof value !== 'string') return;
  const model = value.trim();
  if (model && model.length <= FIELD_LIMITS.name && !/[\p{Cc}\p{Cf}]/u.test(model)) state.model = model;
}

/** Host variables every agent may see; nothing else of the service's environment leaks in (a
 * sandbox replaces the paths among them with its own). */
const BASE_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TERM', 'TMPDIR', 'USER', 'SHELL', 'TZ'];

export function sandboxEnv(
  agent: AgentDefinition,
  context: LaunchContext,
  extraHostVariables: string[] = [],
): Record<string, string> {
  // The project's first: a name svc or the operator's agent definition sets too keeps their value.
  const env: Record<string, string> = { ...context.projectEnv };
  for (const name of [...BASE_ENV, ...extraHostVariables]) {
    const value = context.hostEnv[name];
    if (value !== undefined) env[name] = value;
  }
  Object.assign(env, agent.env, {
    SVC_RUN_ID: context.runId,
    SVC_PROMPT: context.prompt,
    SVC_WORKSPACE: context.workspacePath,
  });
  if (context.repoContext) env.SVC_REPO_CONTEXT = context.repoContext;
  if (agent.model) env.SVC_MODEL = agent.model;
  if (agent.provider) env.SVC_PROVIDER = agent.provider;
  return env;
}

/**
 * What a model-driven agent is asked: the project's context, then the task. A command agent's
 * prompt may be a script (the shell agent's is), so it finds the context in SVC_REPO_CONTEXT only.
 */
export function agentTask({ prompt, repoContext }: Pick<LaunchContext, 'prompt' | 'repoContext'>): string {
  if (!repoContext) return prompt;
  return `Context about this repository, from its settings:\n\n${repoContext.trim()}\n\nYour task:\n\n${prompt}`;
}

export function withSystemPrompt(agent: AgentDefinition, prompt: string): string {
  return agent.systemPrompt ? `${agent.systemPrompt}\n\n${prompt}` : prompt;
}

/** For runtimes that print JSON lines: the parsed object, or the plain log event for anything else. */
export function jsonLine(stream: EventStream, text: string): { json: Record<string, any> } | { plain: ParsedLine } {
  if (stream === 'stderr') return { plain: { kind: 'log.stderr', payload: { text } } };
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return { json: parsed as Record<string, any> };
  } catch {
    // not JSON: a plain line
  }
  return { plain: { kind: 'log.stdout', payload: { text } } };
}
