// OpenAI Codex CLI (`@openai/codex`) as `codex exec --json`: the prompt on stdin, the model as a
// flag, an OpenAI-compatible endpoint as a custom provider when OPENAI_BASE_URL is set, and its
// JSON events parsed into run events and tokens (Codex reports no cost: costUsd stays unmeasured).
import { RUNTIME_CREDENTIALS } from '../../core/agent-capabilities.ts';
import { isRemote, mcpValuesAsVariables, type McpServer } from '../../core/mcp-servers.ts';
import { agentTask, jsonLine, noteReportedModel, sandboxEnv, withSystemPrompt, type RuntimeAdapter } from './types.ts';

const CODEX_ENV = [...RUNTIME_CREDENTIALS.codex, 'OPENAI_BASE_URL'];

export const codexRuntime: RuntimeAdapter = {
  buildLaunch(agent, context) {
    const argv = [
      ...agent.command,
      'exec',
      '--json',
      '--skip-git-repo-check',
      '--dangerously-bypass-approvals-and-sandbox',
      '--color',
      'never',
    ];
    if (agent.model) argv.push('-m', agent.model);
    const baseUrl = context.hostEnv.OPENAI_BASE_URL;
    if (baseUrl) {
      argv.push(
        '-c',
        `model_providers.svc={name="svc",base_url="${baseUrl}",env_key="OPENAI_API_KEY",wire_api="responses"}`,
        '-c',
        'model_provider=svc',
      );
    }
    const mcp = context.mcpServers?.length ? codexMcpLaunch(context.mcpServers) : null;
    if (mcp) argv.push(...mcp.args);
    argv.push('-');
    const prompt = withSystemPrompt(agent, agentTask(context));
    const env = { ...sandboxEnv(agent, context, CODEX_ENV), ...mcp?.env };
    return { argv, cwd: context.workspacePath, env, stdin: prompt };
  },

  costBasis: () => 'api',
  modelEndpoints: (hostEnv) => [hostEnv.OPENAI_BASE_URL || 'https://api.openai.com'],

  parseLine(stream, text, state) {
    const parsed = jsonLine(stream, text);
    if ('plain' in parsed) return parsed.plain;
    const line = parsed.json;
    // The configuration summary Codex prints first (`{"model":…,"provider":…}`) names its model.
    if (line.type === undefined) noteReportedModel(state, line.model);
    const item = line.item as Record<string, any> | undefined;
    if (line.type === 'item.completed' && item) {
      if (item.type === 'agent_message' || item.type === 'reasoning') state.modelOutput = true;
      if (item.type === 'command_execution') {
        state.modelOutput = true;
        return {
          kind: 'tool_use',
          payload: { name: 'exec_command', command: item.command, exitCode: item.exit_code ?? null },
        };
      }
      if (item.type === 'mcp_tool_call') {
        state.modelOutput = true;
        // Named as Claude Code names an MCP tool, its status and no result (which may be long).
        return {
          kind: 'tool_use',
          payload: { name: `mcp__${item.server}__${item.tool}`, input: item.arguments ?? null, status: item.status },
        };
      }
      if (item.type === 'agent_message') return { kind: 'assistant', payload: { text: item.text } };
      return { kind: `agent.item.${item.type}`, payload: item };
    }
    if (line.type === 'turn.completed') {
      const usage = line.usage ?? {};
      const previous = state.usage;
      state.usage = {
        costUsd: null,
        tokensInput: (previous?.tokensInput ?? 0) + (usage.input_tokens ?? 0),
        tokensOutput: (previous?.tokensOutput ?? 0) + (usage.output_tokens ?? 0),
        tokensCacheRead: (previous?.tokensCacheRead ?? 0) + (usage.cached_input_tokens ?? 0),
        tokensCacheWrite: null,
      };
      return { kind: 'state_change', payload: { type: 'result', usage } };
    }
    if (line.type === 'turn.failed') {
      state.providerError = String(line.error?.message ?? 'the model turn failed');
      return { kind: 'agent.turn_failed', payload: line.error ?? null };
    }
    return { kind: `agent.${line.type ?? 'line'}`, payload: line };
  },
};

/** A TOML value for `-c`: a JSON string or array of strings is one; a table is written inline. */
const toml = (value: string | string[]) => JSON.stringify(value);
const tomlTable = (entries: Record<string, string>) =>
  `{${Object.entries(entries)
    .map(([key, value]) => `${JSON.stringify(key)}=${JSON.stringify(value)}`)
    .join(',')}}`;

/**
 * The environment's MCP servers as Codex takes them: `-c mcp_servers.<name>.…` overrides (no file
 * in its home or the workspace; a name is a safe slug, a bare TOML key), their env and header
 * values in variables of its environment, never in argv: a header as `env_http_headers`; a
 * command's env set by `sh` from the variables Codex passes it (`env_vars`), the names safe to
 * write there (core/mcp-servers.ts).
 */
export function codexMcpLaunch(servers: McpServer[]): { args: string[]; env: Record<string, string> } {
  const { variables, env } = mcpValuesAsVariables(servers);
  const args: string[] = [];
  for (const [index, server] of servers.entries()) {
    const key = `mcp_servers.${server.name}`;
    const values = Object.entries(variables[index]!);
    if (isRemote(server)) {
      args.push('-c', `${key}.url=${toml(server.url)}`);
      if (values.length) args.push('-c', `${key}.env_http_headers=${tomlTable(variables[index]!)}`);
    } else if (values.length) {
      const exports = values.map(([name, variable]) => `${name}="$${variable}"`).join(' ');
      args.push(
        '-c',
        `${key}.command="sh"`,
        '-c',
        `${key}.args=${toml(['-c', `export ${exports}; exec "$@"`, 'sh', ...server.command!])}`,
        '-c',
        `${key}.env_vars=${toml(values.map(([, variable]) => variable))}`,
      );
    } else {
      args.push(
        '-c',
        `${key}.command=${toml(server.command![0]!)}`,
        '-c',
        `${key}.args=${toml(server.command!.slice(1))}`,
      );
    }
  }
  return { args, env };
}
