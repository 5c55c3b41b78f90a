// Claude Code (`@anthropic-ai/claude-code`) in print mode with stream-json output: the prompt on
// stdin, the model and the spend cap as flags, and its own JSON lines parsed into events, with the
// terminal `result` envelope giving cost and tokens.
import { jsonLine, sandboxEnv, type RuntimeAdapter } from './types.ts';

/** Model credentials and endpoints Claude Code reads; only these reach its sandbox. */
const CLAUDE_ENV = [
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_AUTH_TOKEN',
  'ANTHROPIC_BASE_URL',
  'CLAUDE_CODE_OAUTH_TOKEN',
  'ANTHROPIC_MODEL',
];

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
    const env = sandboxEnv(agent, context, CLAUDE_ENV);
    // The sandbox is the isolation boundary; Claude Code refuses to skip permissions as root otherwise.
    Object.assign(env, {
      IS_SANDBOX: '1',
      DISABLE_TELEMETRY: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
    });
    return { argv, cwd: context.workspacePath, env, stdin: context.prompt };
  },

  /** An OAuth (subscription) credential without an API key makes the reported cost an estimate. */
  costBasis: (hostEnv) =>
    hostEnv.CLAUDE_CODE_OAUTH_TOKEN && !hostEnv.ANTHROPIC_API_KEY ? 'subscription_estimate' : 'api',
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
      const usage = line.usage ?? {};
      state.usage = {
        costUsd: typeof line.total_cost_usd === 'number' ? line.total_cost_usd : null,
        tokensInput: usage.input_tokens ?? null,
        tokensOutput: usage.output_tokens ?? null,
        tokensCacheRead: usage.cache_read_input_tokens ?? null,
        tokensCacheWrite: usage.cache_creation_input_tokens ?? null,
      };
      if (line.is_error && (line.api_error_status || /api|overloaded|rate|error/i.test(String(line.result ?? ''))))
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
    if (line.type === 'user') return { kind: 'tool_result', payload: { content: line.message?.content } };
    return {
      kind: `agent.${line.type ?? 'line'}${line.subtype ? `.${line.subtype}` : ''}`,
      payload: line.type === 'system' ? { model: line.model, cwd: line.cwd, tools: line.tools?.length } : line,
    };
  },
};
