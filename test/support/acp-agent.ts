// A scripted agent that speaks the Agent Client Protocol through the real SDK's agent side
// (@agentclientprotocol/sdk), for svc's ACP client to drive. Each prompt turn: a plan, a tool call
// that asks permission to write note.txt in its session's directory (and writes and commits it when
// allowed, reporting the edit as a diff), a permission asked for /etc/hosts (which svc must refuse),
// two chunks of one message, and its session's cost. A prompt containing `wait-for-steer` holds its
// turn until a steering turn arrives or the turn is cancelled; a later turn writes the text it got
// to steer.txt. Run as `node acp-agent.ts`, with its stdio as the protocol's transport.
import { agent, methods, ndJsonStream } from '@agentclientprotocol/sdk';
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';

let cwd = '/';
let servers: string[] = [];
let turns = 0;
let cancelled: (() => void) | null = null;
let cost = 0;

const commit = (file: string, message: string) => {
  execFileSync('git', ['add', file], { cwd });
  execFileSync('git', ['-c', 'user.name=acp', '-c', 'user.email=acp@example.com', 'commit', '-q', '-m', message], {
    cwd,
  });
};

const app = agent({ name: 'svc-test-acp-agent' })
  .onRequest(methods.agent.initialize, () => ({
    protocolVersion: 1,
    agentCapabilities: { loadSession: false, mcpCapabilities: { http: true, sse: false } },
    agentInfo: { name: 'svc-test-acp-agent', version: '1.0.0' },
    authMethods: [],
  }))
  .onRequest(methods.agent.session.new, ({ params }) => {
    cwd = params.cwd;
    servers = params.mcpServers.map((server) => server.name);
    return { sessionId: 'session-1' };
  })
  .onNotification(methods.agent.session.cancel, () => cancelled?.())
  .onRequest(methods.agent.session.prompt, async ({ params, client }) => {
    turns += 1;
    const text = params.prompt.map((block) => (block.type === 'text' ? block.text : '')).join('');
    const update = (value: Record<string, unknown>) =>
      client.notify(methods.client.session.update, { sessionId: params.sessionId, update: value as never });
    const say = async (...chunks: string[]) => {
      for (const chunk of chunks)
        await update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: chunk } });
    };
    if (turns > 1) {
      writeFileSync(join(cwd, 'steer.txt'), `${text}\n`);
      commit('steer.txt', 'Take the steering');
      await say('steered: ', text.split('\n').at(-1) ?? '');
      return { stopReason: 'end_turn' };
    }
    await update({
      sessionUpdate: 'plan',
      entries: [
        { content: 'Write the note', status: 'in_progress', priority: 'high' },
        { content: 'Say what was done', status: 'pending', priority: 'medium' },
      ],
    });
    const inside = join(cwd, 'note.txt');
    await update({
      sessionUpdate: 'tool_call',
      toolCallId: 'write-note',
      title: 'Write note.txt',
      kind: 'edit',
      status: 'pending',
      locations: [{ path: inside }],
    });
    const asked = await client.request(methods.client.session.requestPermission, {
      sessionId: params.sessionId,
      toolCall: { toolCallId: 'write-note', title: 'Write note.txt', locations: [{ path: inside }] },
      options: [
        { optionId: 'yes', name: 'Allow', kind: 'allow_once' },
        { optionId: 'no', name: 'Reject', kind: 'reject_once' },
      ],
    });
    if (asked.outcome.outcome === 'selected' && asked.outcome.optionId === 'yes') {
      const before = existsSync(inside);
      writeFileSync(inside, 'hello\nworld\n');
      commit('note.txt', 'Write the note');
      await update({
        sessionUpdate: 'tool_call_update',
        toolCallId: 'write-note',
        status: 'completed',
        content: [{ type: 'diff', path: 'note.txt', oldText: before ? '' : null, newText: 'hello\nworld\n' }],
      });
    }
    const outside = await client.request(methods.client.session.requestPermission, {
      sessionId: params.sessionId,
      toolCall: { toolCallId: 'edit-hosts', title: 'Edit /etc/hosts', locations: [{ path: '/etc/hosts' }] },
      options: [
        { optionId: 'yes', name: 'Allow', kind: 'allow_once' },
        { optionId: 'no', name: 'Reject', kind: 'reject_once' },
      ],
    });
    const refused = outside.outcome.outcome === 'selected' && outside.outcome.optionId === 'no';
    await say(
      `Wrote note.txt; /etc/hosts ${refused ? 'refused' : 'allowed'}; servers: ${servers.join(',') || 'none'}.`,
    );
    cost += 0.0123;
    await update({ sessionUpdate: 'usage_update', used: 1200, size: 200_000, cost: { amount: cost, currency: 'USD' } });
    if (text.includes('wait-for-steer')) {
      // Holds the turn until svc cancels it (an urgent message) or 20 s pass (a queued one waits).
      const outcome = await new Promise<'cancelled' | 'waited'>((resolve) => {
        cancelled = () => resolve('cancelled');
        setTimeout(() => resolve('waited'), text.includes('urgent') ? 60_000 : 3000);
      });
      cancelled = null;
      if (outcome === 'cancelled') return { stopReason: 'cancelled' };
    }
    return { stopReason: 'end_turn' };
  });

const stream = ndJsonStream(
  Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
  Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
);
app.connect(stream);
