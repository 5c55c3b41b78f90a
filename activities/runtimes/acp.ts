// The Agent Client Protocol runtime: any agent that speaks ACP over its stdio, declared in the
// agents file by its command. svc's ACP client runs in front of it in the sandbox
// (sandbox/inside/acp-client.ts): it opens the session with the run's MCP servers, sends the task,
// answers permission requests by svc's policy, delivers steering as further turns, and prints what
// the agent reports as `{"acp": …}` lines, which become the run's structured events here.
import { agentSteering } from '../../core/agent-capabilities.ts';
import { isRemote, type McpServer } from '../../core/mcp-servers.ts';
import { agentTask, jsonLine, sandboxEnv, withSystemPrompt, type ParsedLine, type RuntimeAdapter } from './types.ts';

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

/** A string of the line, at most `max` characters, or null: the agent can write these lines itself. */
const str = (value: unknown, max: number): string | null =>
  typeof value === 'string' ? (value.length > max ? `${value.slice(0, max)}…` : value) : null;
const count = (value: unknown): number | null =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.min(value, 1e12) : null;
const strings = (value: unknown, max: number, items: number): string[] =>
  Array.isArray(value)
    ? value
        .slice(0, items)
        .map((item) => str(item, max))
        .filter((item): item is string => item !== null)
    : [];

/** Each of the client's lines as a run event, rebuilt from the fields it may carry (never the line as given). */
const EVENTS: Record<string, (line: Record<string, any>) => ParsedLine> = {
  message: (line) => ({ kind: 'agent.message', payload: { text: str(line.text, 64_000) ?? '' } }),
  thought: (line) => ({ kind: 'agent.thought', payload: { text: str(line.text, 64_000) ?? '' } }),
  tool_call: (line) => ({
    kind: 'agent.tool_call',
    payload: {
      id: str(line.id, 200),
      kind: str(line.kind, 40),
      title: str(line.title, 500),
      status: str(line.status, 40),
      locations: strings(line.locations, 1000, 20),
      update: line.update === true,
    },
  }),
  file_edit: (line) => ({
    kind: 'agent.file_edit',
    payload: {
      path: str(line.path, 1000),
      added: count(line.added),
      removed: count(line.removed),
      created: line.created === true,
    },
  }),
  plan: (line) => ({
    kind: 'agent.plan',
    payload: {
      entries: (Array.isArray(line.entries) ? line.entries.slice(0, 50) : []).map((entry: any) => ({
        content: str(entry?.content, 500) ?? '',
        status: str(entry?.status, 40) ?? '',
        priority: str(entry?.priority, 40) ?? '',
      })),
    },
  }),
  permission: (line) => ({
    kind: 'agent.permission',
    payload: {
      title: str(line.title, 500),
      toolCallId: str(line.toolCallId, 200),
      decision: line.decision === 'allowed' ? 'allowed' : 'refused',
      reason: str(line.reason, 100),
      paths: strings(line.paths, 1000, 50),
    },
  }),
  turn_ended: (line) => ({ kind: 'agent.turn_ended', payload: { stopReason: str(line.stopReason, 40) } }),
  steer: (line) => ({ kind: 'agent.steer_taken', payload: { priority: str(line.priority, 20) } }),
  session: (line) => ({
    kind: 'agent.session',
    payload: { agent: { name: str(line.agent?.name, 100), version: str(line.agent?.version, 100) } },
  }),
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
      stdin: agentTask({ ...context, prompt: withSystemPrompt(agent, context.prompt) }),
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
    if (line.acp === 'usage') {
      const cost = line.cost && typeof line.cost === 'object' ? line.cost : null;
      const amount = count(cost?.amount);
      // The session's cost so far, in dollars; another currency is not summed with dollars.
      if (amount !== null && cost.currency === 'USD')
        state.usage = {
          costUsd: Math.max(amount, state.usage?.costUsd ?? 0),
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
          contextTokens: count(line.used),
          contextSize: count(line.size),
        },
      };
    }
    const event = typeof line.acp === 'string' && Object.hasOwn(EVENTS, line.acp) ? EVENTS[line.acp]!(line) : null;
    if (!event) return { kind: 'log.stdout', payload: { text } };
    if (['agent.message', 'agent.thought', 'agent.tool_call'].includes(event.kind)) state.modelOutput = true;
    return event;
  },
};
