// A tiny MCP server, committed into a fixture repository and started by the agent in its sandbox:
// newline-delimited JSON-RPC over stdio (initialize, tools/list, tools/call). Its one tool,
// `write_note`, writes its text (after $NOTE_PREFIX, from the server's env) to mcp-note.txt in the
// workspace and answers `note written: <text>`.
export const MCP_PROBE_SCRIPT = String.raw`
import { writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const send = (message) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...message }) + '\n');
const tool = {
  name: 'write_note',
  description: 'Writes a note to mcp-note.txt',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
};
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const { id, method, params } = JSON.parse(line);
  if (id === undefined) continue;
  if (method === 'initialize')
    send({
      id,
      result: {
        protocolVersion: params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: 'probe', version: '1.0.0' },
      },
    });
  else if (method === 'tools/list') send({ id, result: { tools: [tool] } });
  else if (method === 'tools/call') {
    const text = (process.env.NOTE_PREFIX ?? '') + String(params.arguments?.text ?? '');
    writeFileSync('mcp-note.txt', text + '\n');
    send({ id, result: { content: [{ type: 'text', text: 'note written: ' + text }] } });
  } else if (method === 'ping') send({ id, result: {} });
  else send({ id, error: { code: -32601, message: 'no method ' + method } });
}
`;
