// OpenCode (`opencode-ai`) as `opencode run --format json`: the prompt on stdin, the model as
// `provider/model`, its configuration (endpoint overrides, permissions) given inline through
// OPENCODE_CONFIG_CONTENT so nothing is written into the workspace, and its JSON events parsed
// into run events, tokens and the cost it reports per step.
import { RUNTIME_CREDENTIALS } from '../../core/agent-capabilities.ts';
import type { AgentDefinition } from '../../core/agents.ts';
import { isRemote, type McpServer } from '../../core/mcp-servers.ts';
import { agentTask, jsonLine, sandboxEnv, withSystemPrompt, type LaunchContext, type RuntimeAdapter } from './types.ts';

const OPENCODE_ENV = [...RUNTIME_CREDENTIALS.opencode, 'OPENCODE_DISABLE_MODELS_FETCH', 'OPENCODE_MODELS_PATH'];

/** Endpoint overrides the host sets for a provider's API, as OpenCode expects them (with /v1). */
const BASE_URL_VARIABLES: Record<string, string> = { anthropic: 'ANTHROPIC_BASE_URL', openai: 'OPENAI_BASE_URL' };

function modelId(agent: AgentDefinition): string | null {
  if (!agent.model) return null;
  if (agent.model.includes('/')) return agent.model;
  return `${agent.provider ?? 'anthropic'}/${agent.model}`;
}

function inlineConfig(
  agent: AgentDefinition,
  context: LaunchContext,
): { config: Record<string, unknown>; endpointOverridden: boolean } {
  const provider: Record<string, { options: { baseURL: string } }> = {};
  for (const [name, variable] of Object.entries(BASE_URL_VARIABLES)) {
    const base = context.hostEnv[variable];
    if (base)
      provider[name] = {
        options: { baseURL: base.replace(/\/+$/, '').endsWith('/v1') ? base : `${base.replace(/\/+$/, '')}/v1` },
      };
  }
  const model = modelId(agent);
  return {
    // The sandbox is the boundary: the agent may run commands and edit files without asking.
    config: {
      autoupdate: false,
      share: 'disabled',
      permission: { bash: 'allow', edit: 'allow', webfetch: 'allow' },
      provider,
      ...(model ? { model } : {}),
      ...(context.mcpServers?.length ? { mcp: openCodeMcp(context.mcpServers) } : {}),
    },
    endpointOverridden: Object.keys(provider).length > 0,
  };
}

/** The environment's MCP servers as OpenCode's `mcp` key: inline, like the rest of its configuration. */
export function openCodeMcp(servers: McpServer[]): Record<string, unknown> {
  return Object.fromEntries(
    servers.map((server) => [
      server.name,
      isRemote(server)
        ? { type: 'remote', url: server.url, headers: server.headers ?? {}, enabled: true }
        : { type: 'local', command: server.command, environment: server.env ?? {}, enabled: true },
    ]),
  );
}

function toNumber(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

export const openCodeRuntime: RuntimeAdapter = {
  buildLaunch(agent, context) {
    const argv = [...agent.command, 'run', '--format', 'json'];
    const model = modelId(agent);
    if (model) argv.push('--model', model);
    const { config, endpointOverridden } = inlineConfig(agent, context);
    const env = sandboxEnv(agent, context, OPENCODE_ENV);
    Object.assign(env, {
      OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
      OPENCODE_DISABLE_AUTOUPDATE: '1',
      OPENCODE_DISABLE_SHARE: '1',
      OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    });
    // A private endpoint means no public catalogue either: use the model list OpenCode ships with.
    if (endpointOverridden) env.OPENCODE_DISABLE_MODELS_FETCH = '1';
    return { argv, cwd: context.workspacePath, env, stdin: withSystemPrompt(agent, agentTask(context)) };
  },

  costBasis: () => 'api',
  // Each provider's API (or its override), and the public model catalogue OpenCode reads at start.
  modelEndpoints: (hostEnv) => [
    hostEnv.ANTHROPIC_BASE_URL || 'https://api.anthropic.com',
    hostEnv.OPENAI_BASE_URL || 'https://api.openai.com',
    'https://models.dev',
  ],

  parseLine(stream, text, state) {
    const parsed = jsonLine(stream, text);
    if ('plain' in parsed) return parsed.plain;
    const line = parsed.json;
    const part = (line.part ?? {}) as Record<string, any>;
    switch (line.type) {
      case 'text':
        state.modelOutput = true;
        return { kind: 'assistant', payload: { text: part.text ?? '' } };
      case 'reasoning':
        state.modelOutput = true;
        return { kind: 'agent.reasoning', payload: { text: part.text ?? '' } };
      case 'tool_use':
        state.modelOutput = true;
        return {
          kind: 'tool_use',
          payload: {
            name: part.tool,
            input: part.state?.input ?? null,
            status: part.state?.status ?? null,
            exitCode: part.state?.metadata?.exit ?? null,
          },
        };
      case 'step_finish': {
        // Each step reports its own tokens and cost; the run's usage is their sum.
        const tokens = part.tokens ?? {};
        const previous = state.usage;
        state.usage = {
          costUsd: (previous?.costUsd ?? 0) + toNumber(part.cost),
          tokensInput: (previous?.tokensInput ?? 0) + toNumber(tokens.input),
          tokensOutput: (previous?.tokensOutput ?? 0) + toNumber(tokens.output) + toNumber(tokens.reasoning),
          tokensCacheRead: (previous?.tokensCacheRead ?? 0) + toNumber(tokens.cache?.read),
          tokensCacheWrite: (previous?.tokensCacheWrite ?? 0) + toNumber(tokens.cache?.write),
        };
        return { kind: 'agent.step_finish', payload: { reason: part.reason ?? null, tokens, cost: part.cost ?? null } };
      }
      case 'error': {
        const error = (line.error ?? {}) as Record<string, any>;
        state.providerError = String(error.data?.message ?? error.name ?? 'the model provider failed');
        return {
          kind: 'agent.error',
          payload: {
            name: error.name ?? null,
            message: error.data?.message ?? null,
            statusCode: error.data?.statusCode ?? null,
          },
        };
      }
      default:
        return { kind: `agent.${line.type ?? 'line'}`, payload: line };
    }
  },
};
