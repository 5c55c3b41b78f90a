// A scripted model server speaking the Anthropic Messages API (streaming SSE and plain JSON) and
// the OpenAI Responses API (streaming SSE), for running the real Claude Code and Codex CLIs in tests. Each conversation
// turn answers the next scripted step:
// a tool call (which Claude Code then really executes) or a final text.
import { createServer, type Server, type ServerResponse } from 'node:http';
import { closeServer, listenOnLoopback } from './loopback-server.ts';

export type ScriptStep =
  | { toolUse: { name: string; input: Record<string, unknown> } }
  | { text: string }
  | { error: { status: number; type: string; message: string } };

export interface ModelRequest {
  path: string;
  model: string;
  messages: number;
  tools: string[];
  /** The conversation's last message as JSON (where Claude Code puts input it took mid-turn). */
  lastMessage: string;
}

const USAGE = { input_tokens: 120, output_tokens: 30, cache_read_input_tokens: 8, cache_creation_input_tokens: 4 };

export class ScriptedModel {
  readonly requests: ModelRequest[] = [];
  #server: Server | undefined;
  url = '';
  #script: ScriptStep[];

  constructor(script: ScriptStep[]) {
    this.#script = script;
  }

  setScript(script: ScriptStep[]): void {
    this.#script = script;
  }

  /**
   * The step for a conversation: the number of assistant turns it already holds. Side requests (no tools) get a short
   * text.
   */
  #stepFor(body: { messages?: { role: string }[]; tools?: { name: string }[] }): ScriptStep {
    if (!body.tools?.some((tool) => tool.name.toLowerCase() === 'bash')) return { text: 'ok' };
    const turn = (body.messages ?? []).filter((message) => message.role === 'assistant').length;
    return this.#script[turn] ?? { text: 'Done.' };
  }

  async start(): Promise<string> {
    this.#server = createServer(async (req, res) => {
      let raw = '';
      for await (const chunk of req) raw += chunk;
      const body = raw ? JSON.parse(raw) : {};
      const path = req.url ?? '';
      if (path.includes('count_tokens')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ input_tokens: 10 }));
        return;
      }
      if (path.startsWith('/v1/responses')) {
        this.#answerResponses(body, res);
        return;
      }
      if (!path.startsWith('/v1/messages')) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      this.requests.push({
        path,
        model: body.model,
        messages: body.messages?.length ?? 0,
        tools: (body.tools ?? []).map((tool: { name: string }) => tool.name),
        lastMessage: JSON.stringify(body.messages?.at(-1) ?? null),
      });
      const step = this.#stepFor(body);
      if ('error' in step) {
        res
          .writeHead(step.error.status, { 'content-type': 'application/json', 'x-should-retry': 'false' })
          .end(JSON.stringify({ type: 'error', error: { type: step.error.type, message: step.error.message } }));
        return;
      }
      // Call the tool by the name this client offers it under (Claude Code: Bash, OpenCode: bash).
      const offered = (body.tools ?? []).find(
        (tool: { name: string }) => 'toolUse' in step && tool.name.toLowerCase() === step.toolUse.name.toLowerCase(),
      )?.name;
      const block =
        'toolUse' in step
          ? {
              type: 'tool_use',
              id: `toolu_${this.requests.length}`,
              name: offered ?? step.toolUse.name,
              input: step.toolUse.input,
            }
          : { type: 'text', text: step.text };
      const stopReason = block.type === 'tool_use' ? 'tool_use' : 'end_turn';
      const id = `msg_${this.requests.length}`;
      if (!body.stream) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id,
            type: 'message',
            role: 'assistant',
            model: body.model,
            content: [block],
            stop_reason: stopReason,
            stop_sequence: null,
            usage: USAGE,
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      send('message_start', {
        type: 'message_start',
        message: {
          id,
          type: 'message',
          role: 'assistant',
          model: body.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...USAGE, output_tokens: 1 },
        },
      });
      if (block.type === 'text') {
        send('content_block_start', {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'text', text: '' },
        });
        send('content_block_delta', {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'text_delta', text: block.text },
        });
      } else {
        send('content_block_start', {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
        });
        send('content_block_delta', {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
        });
      }
      send('content_block_stop', { type: 'content_block_stop', index: 0 });
      send('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: { output_tokens: USAGE.output_tokens },
      });
      send('message_stop', { type: 'message_stop' });
      res.end();
    });
    this.url = await listenOnLoopback(this.#server);
    return this.url;
  }

  /** OpenAI Responses API: the step is the number of tool results the conversation already holds. */
  #answerResponses(
    body: { model: string; input?: { type?: string }[]; tools?: { name?: string }[] },
    res: ServerResponse,
  ): void {
    this.requests.push({
      path: '/v1/responses',
      model: body.model,
      messages: body.input?.length ?? 0,
      tools: (body.tools ?? []).map((tool) => tool.name ?? ''),
      lastMessage: JSON.stringify(body.input?.at(-1) ?? null),
    });
    const turn = (body.input ?? []).filter((item) => item.type === 'function_call_output').length;
    const step = this.#script[turn] ?? { text: 'Done.' };
    if ('error' in step) {
      res
        .writeHead(step.error.status, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { type: step.error.type, message: step.error.message } }));
      return;
    }
    const id = `resp_${this.requests.length}`;
    const item =
      'toolUse' in step
        ? {
            type: 'function_call',
            id: `fc_${this.requests.length}`,
            call_id: `call_${this.requests.length}`,
            ...mcpOrShell(step.toolUse),
            status: 'completed',
          }
        : {
            type: 'message',
            id: `msg_${this.requests.length}`,
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: step.text, annotations: [] }],
          };
    const usage = {
      input_tokens: USAGE.input_tokens,
      input_tokens_details: { cached_tokens: USAGE.cache_read_input_tokens },
      output_tokens: USAGE.output_tokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: USAGE.input_tokens + USAGE.output_tokens,
    };
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const send = (data: { type: string }) => res.write(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
    send({
      type: 'response.created',
      response: { id, object: 'response', status: 'in_progress', model: body.model, output: [] },
    } as { type: string });
    send({ type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress' } } as {
      type: string;
    });
    send({ type: 'response.output_item.done', output_index: 0, item } as { type: string });
    send({
      type: 'response.completed',
      response: { id, object: 'response', status: 'completed', model: body.model, output: [item], usage },
    } as { type: string });
    res.end();
  }

  async stop(): Promise<void> {
    await closeServer(this.#server);
  }
}

/**
 * A Responses function call for a scripted tool use: an MCP tool (`mcp__<server>__<tool>`) in its
 * server's namespace, as Codex offers it; any other tool is a shell command.
 */
function mcpOrShell(toolUse: { name: string; input: Record<string, unknown> }) {
  const mcp = /^(mcp__[^_]+(?:[-_][^_]+)*)__(.+)$/.exec(toolUse.name);
  if (mcp) return { namespace: mcp[1], name: mcp[2], arguments: JSON.stringify(toolUse.input) };
  return { name: 'exec_command', arguments: JSON.stringify({ cmd: String(toolUse.input.command) }) };
}
