// The Agent Client Protocol runtime: any agent that speaks ACP over its stdio, declared in the
// agents file by its command. svc's ACP client runs in front of it in the sandbox
// (sandbox/inside/acp-client.ts): it opens the session with the run's MCP servers, sends the task,
// answers permission requests by svc's policy, delivers steering as further turns, and prints what
// the agent reports as `{"acp": …}` lines, which become the run's structured events here.
import { agentSteering } from '../../core/agent-capabilities.ts';
import { isRemote, type McpServer } from '../../core/mcp-servers.ts';
import { agentTask, jsonLine, sandboxEnv, type ParsedLine, type RuntimeAdapter } from './types.ts';

/** The environment's MCP servers in ACP's own shape (session/new's `mcpServers`). */
export function acpMcpServers(servers: readonly McpServer[]): unknown[] {
  const pairs = (values: Record<string, string> | undefined) =>
    Object.entries(values ?? {}).map(([name, value]) => ({ name, value }));
  return servers.map((server) =>
    isRemote(server)
      ? { type: 'http', name: server.name, url: server.url, headers: pairs(server.headers) }
      : { name: server.name, command: server.command![0], args: server.command!.slice(1), env: pairs(server.env) },
  );
}

/** The client's own lines, named as run events. */
const KINDS: Record<string, string> = {
  message: 'agent.message',
  thought: 'agent.thought',
  tool_call: 'agent.tool_call',
  file_edit: 'agent.file_edit',
  plan: 'agent.plan',
  permission: 'agent.permission',
  turn_ended: 'agent.turn_ended',
  steer: 'agent.steer_taken',
  session: 'agent.session',
  usage: 'usage',
};

export const acpRuntime: RuntimeAdapter = {
  buildLaunch(agent, context) {
    const env = sandboxEnv(agent, context);
    // In the client's environment, not its argv; it takes them out before it starts the agent.
    if (context.mcpServers?.length) env.SVC_ACP_MCP = JSON.stringify(acpMcpServers(context.mcpServers));
    if (agentSteering(agent) === 'mid-run') env.SVC_ACP_STEERING = '1';
    return {
      argv: agent.command,
      cwd: context.workspacePath,
      env,
      stdin: agentTask({
        ...context,
        prompt: agent.systemPrompt ? `${agent.systemPrompt}\n\n${context.prompt}` : context.prompt,
      }),
      protocol: 'acp',
    };
  },
  // What the agent reports as its session's cost, when it does.
  costBasis: () => 'api',
  modelEndpoints: () => [],
  parseLine(stream, text, state): ParsedLine {
    const parsed = jsonLine(stream, text);
    if ('plain' in parsed) return parsed.plain;
    const line = parsed.json;
    const kind = typeof line.acp === 'string' ? KINDS[line.acp] : undefined;
    if (!kind) return { kind: 'log.stdout', payload: { text } };
    const { acp: _acp, ...payload } = line;
    if (line.acp === 'message' || line.acp === 'thought' || line.acp === 'tool_call') state.modelOutput = true;
    if (line.acp === 'usage') {
      const cost = line.cost;
      // The session's cost so far, in dollars; another currency is not summed with dollars.
      if (cost && typeof cost.amount === 'number' && cost.currency === 'USD')
        state.usage = {
          costUsd: Math.max(cost.amount, state.usage?.costUsd ?? 0),
          tokensInput: null,
          tokensOutput: null,
          tokensCacheRead: null,
          tokensCacheWrite: null,
        };
      // svc's usage shape, with what ACP adds: how full the agent's context is.
      return {
        kind: 'usage',
        payload: {
          costUsd: state.usage?.costUsd ?? null,
          contextTokens: typeof line.used === 'number' ? line.used : null,
          contextSize: typeof line.size === 'number' ? line.size : null,
        },
      };
    }
    return { kind, payload } as ParsedLine;
  },
};
