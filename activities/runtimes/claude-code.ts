// Claude Code (`@anthropic-ai/claude-code`) in print mode with stream-json output: the prompt on
// stdin, the model and the spend cap as flags, and its own JSON lines parsed into events, with the
// `result` envelope giving cost and tokens. A steerable agent reads stream-json input through svc's
// steering relay, which writes steering messages into it while it works (one `result` per turn).
import { agentSteering, RUNTIME_CREDENTIALS, runtimeCostBasis } from '../../core/agent-capabilities.ts';
import { isRemote, mcpValuesAsVariables, type McpServer } from '../../core/mcp-servers.ts';
import { agentTask, jsonLine, noteReportedModel, sandboxEnv, type RuntimeAdapter } from './types.ts';

/** Model credentials and endpoints Claude Code reads; only these reach its sandbox. */
const CLAUDE_ENV = [...RUNTIME_CREDENTIALS['claude-code'], 'ANTHROPIC_BASE_URL', 'ANTHROPIC_MODEL'];

/** How much of a replayed input message an event keeps. */
const REPLAY_TEXT_MAX = 4000;

interface ContentBlock {
  type: string;
  name?: string;
  input?: unknown;
  text?: string;
}

export const claudeCodeRuntime: RuntimeAdapter = {
  buildLaunch(agent, context) {
    const argv = [
      ...agent.command,
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--dangerously-skip-permissions',
    ];
    if (agent.model) argv.push('--model', agent.model);
    if (agent.maxCostUsd) argv.push('--max-budget-usd', String(agent.maxCostUsd));
    if (agent.systemPrompt) argv.push('--append-system-prompt', agent.systemPrompt);
    // Claude Code takes input while it works: mid-turn (with the next tool result) or as a new turn.
    const steerable = agentSteering(agent) === 'mid-run';
    if (steerable) argv.push('--input-format', 'stream-json', '--replay-user-messages');
    // Last: both flags take every argument after them.
    const mcp = context.mcpServers?.length ? claudeMcpLaunch(context.mcpServers) : null;
    if (mcp) argv.push(...mcp.args);
    const env = { ...sandboxEnv(agent, context, CLAUDE_ENV), ...mcp?.env };
    // The sandbox is the isolation boundary; Claude Code refuses to skip permissions as root otherwise.
    Object.assign(env, {
      IS_SANDBOX: '1',
      DISABLE_TELEMETRY: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
    });
    return {
      argv,
      cwd: context.workspacePath,
      env,
      stdin: agentTask(context),
      steering: steerable ? 'claude-stream-json' : null,
    };
  },

  costBasis: (hostEnv) => runtimeCostBasis('claude-code', hostEnv),
  modelEndpoints: (hostEnv) => [hostEnv.ANTHROPIC_BASE_URL || 'https://api.anthropic.com'],

  parseLine(stream, text, state) {
    const parsed = jsonLine(stream, text);
    if ('plain' in parsed) return parsed.plain;
    const line = parsed.json;
    if (line.type === 'assistant') {
      const blocks: ContentBlock[] = line.message?.content ?? [];
      if (blocks.some((block) => ['text', 'thinking', 'tool_use'].includes(block.type))) state.modelOutput = true;
      const tool = blocks.find((block) => block.type === 'tool_use');
      if (tool) return { kind: 'tool_use', payload: { name: tool.name, input: tool.input } };
      return {
        kind: 'assistant',
        payload: {
          text: blocks
            .filter((block) => block.type === 'text')
            .map((block) => block.text)
            .join(''),
        },
      };
    }
    if (line.type === 'result') {
      // Each turn's result: its own tokens (summed over turns) and the session's cost so far.
      const usage = line.usage ?? {};
      const before = state.usage;
      const add = (earlier: number | null | undefined, turn: unknown) =>
        typeof turn === 'number' ? (earlier ?? 0) + turn : (earlier ?? null);
      state.usage = {
        // The session's running total; a crash's result may carry zero, which must not lower it.
        costUsd:
          typeof line.total_cost_usd === 'number'
            ? Math.max(line.total_cost_usd, before?.costUsd ?? 0)
            : (before?.costUsd ?? null),
        tokensInput: add(before?.tokensInput, usage.input_tokens),
        tokensOutput: add(before?.tokensOutput, usage.output_tokens),
        tokensCacheRead: add(before?.tokensCacheRead, usage.cache_read_input_tokens),
        tokensCacheWrite: add(before?.tokensCacheWrite, usage.cache_creation_input_tokens),
      };
      // A later turn that succeeded (a steered one) outweighs a provider error an earlier turn ended in.
      if (!line.is_error) state.providerError = null;
      else if (line.api_error_status || /api|overloaded|rate|error/i.test(String(line.result ?? '')))
        state.providerError = String(line.result ?? `API error ${line.api_error_status}`);
      return {
        kind: 'state_change',
        payload: {
          type: 'result',
          subtype: line.subtype,
          isError: line.is_error,
          numTurns: line.num_turns,
          costUsd: line.total_cost_usd,
          stopReason: line.stop_reason,
        },
      };
    }
    // Its init line names the model it runs (an alias asked for, or its own default, resolved).
    if (line.type === 'system' && line.subtype === 'init') noteReportedModel(state, line.model);
    // Input it took (the prompt, a steering message), replayed by --replay-user-messages.
    if (line.type === 'user' && line.isReplay) return { kind: 'agent.user_message', payload: replayed(line) };
    if (line.type === 'user') return { kind: 'tool_result', payload: { content: line.message?.content } };
    return {
      kind: `agent.${line.type ?? 'line'}${line.subtype ? `.${line.subtype}` : ''}`,
      payload: line.type === 'system' ? { model: line.model, cwd: line.cwd, tools: line.tools?.length } : line,
    };
  },
};

/**
 * The environment's MCP servers as Claude Code takes them: an inline `--mcp-config` (no file, in the
 * workspace or elsewhere) whose env and header values are `${SVC_MCP_…}` variables Claude Code
 * expands from its environment (never a secret in argv), and their tools allowed (`mcp__<name>`).
 */
export function claudeMcpLaunch(servers: McpServer[]): { args: string[]; env: Record<string, string> } {
  const { variables, env } = mcpValuesAsVariables(servers);
  const expanded = (index: number) =>
    Object.fromEntries(Object.entries(variables[index]!).map(([key, variable]) => [key, `\${${variable}}`]));
  const mcpServers = Object.fromEntries(
    servers.map((server, index) => [
      server.name,
      isRemote(server)
        ? { type: 'http', url: server.url, headers: expanded(index) }
        : { type: 'stdio', command: server.command![0], args: server.command!.slice(1), env: expanded(index) },
    ]),
  );
  const args = ['--mcp-config', JSON.stringify({ mcpServers }), '--allowedTools'];
  return { args: [...args, ...servers.map((server) => `mcp__${server.name}`)], env };
}

/** A replayed input message as an event: its text, cut (the prompt may be long). */
function replayed(line: Record<string, any>): { text: string; truncated?: true } {
  const content = line.message?.content;
  const text =
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content.map((block: ContentBlock) => block.text ?? '').join('')
        : '';
  return text.length > REPLAY_TEXT_MAX ? { text: text.slice(0, REPLAY_TEXT_MAX), truncated: true } : { text };
}
