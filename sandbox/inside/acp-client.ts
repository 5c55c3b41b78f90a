// svc's Agent Client Protocol client, in front of an agent that speaks ACP (JSON-RPC over its
// stdio): it opens one session in the workspace with the run's MCP servers, sends the prompt as the
// first turn, answers the agent's permission requests by svc's policy (inside the workspace yes,
// anything else no: never a question that would block the run), and prints what the agent reports
// as one JSON line each (`{"acp": …}`) for svc's runtime adapter (activities/runtimes/acp.ts).
// Steerable, it claims the run's inbox while the agent works: each message is the next turn, an
// urgent one cancels the turn under way first. Once a turn has ended and the inbox is empty, it
// closes the agent's input and ends as the session did. Runs inside the sandbox as the agent
// (bound read-only at /run/svc/bin/acp.mjs): it holds nothing the agent lacks.
//   SVC_ACP_MCP='[…]' SVC_ACP_STEERING=1 node acp.mjs <command> [args…]   (the prompt on stdin)
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { isAbsolute, relative, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { claimInbox, steeringText, type InboxMessage } from './wire.ts';

/** The protocol version svc speaks (ACP's stable one). */
const PROTOCOL_VERSION = 1;
/** How often the inbox is asked while the agent works. */
const POLL_MS = Math.max(100, Number(process.env.SVC_INBOX_POLL_INTERVAL_MS) || 500);
/** Between the two empty claims that end an idle session. */
const CLOSE_CONFIRM_MS = 1000;
/** How much of an agent message one line carries; the rest follows in further lines. */
const MESSAGE_MAX = 16_000;
/** Exit codes of svc's own: the agent did not speak ACP as svc does, or refused the session. */
const EXIT_PROTOCOL = 3;

const [command, ...args] = process.argv.slice(2);
if (!command) {
  process.stderr.write('usage: acp.mjs <command> [args…]\n');
  process.exit(2);
}
const steerable = process.env.SVC_ACP_STEERING === '1';
const mcpServers = parseServers(process.env.SVC_ACP_MCP);
delete process.env.SVC_ACP_MCP;
delete process.env.SVC_ACP_STEERING;
const workspace = process.cwd();

function parseServers(text: string | undefined): unknown[] {
  if (!text) return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed : [];
  } catch {
    return [];
  }
}

function say(message: string): void {
  process.stderr.write(`svc acp: ${message}\n`);
}

/** One line for svc's adapter. */
function emit(record: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ acp: record.type, ...record, type: undefined })}\n`);
}

let prompt = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) prompt += chunk;

const agent = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
agent.once('error', (error) => {
  say(error.message);
  process.exit((error as NodeJS.ErrnoException).code === 'ENOENT' ? 127 : 126);
});
agent.stdin!.on('error', () => {});
for (const name of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(name, () => agent.kill(name));

// JSON-RPC over the agent's stdio: one message per line.
type Pending = { resolve(value: any): void; reject(error: Error): void };
const pending = new Map<number, Pending>();
let nextId = 1;

function send(message: Record<string, unknown>): void {
  if (!agent.stdin!.writable) return;
  agent.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
}

function request(method: string, params: unknown): Promise<any> {
  const id = nextId++;
  send({ id, method, params });
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}

class RpcError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

createInterface({ input: agent.stdout!, crlfDelay: Infinity }).on('line', (line) => {
  let message: Record<string, any>;
  try {
    message = JSON.parse(line);
  } catch {
    // Not the protocol: the agent's own output, kept as its log.
    if (line.trim()) process.stdout.write(`${line}\n`);
    return;
  }
  if (typeof message !== 'object' || message === null) return;
  if (message.method === undefined && typeof message.id === 'number') {
    const waiting = pending.get(message.id);
    pending.delete(message.id);
    if (message.error) waiting?.reject(new RpcError(message.error.code ?? 0, String(message.error.message ?? 'error')));
    else waiting?.resolve(message.result);
    return;
  }
  if (typeof message.method !== 'string') return;
  if (message.id === undefined) return notified(message.method, message.params ?? {});
  void answer(message.method, message.params ?? {}).then(
    (result) => send({ id: message.id, result }),
    (error: RpcError) => send({ id: message.id, error: { code: error.code ?? -32603, message: error.message } }),
  );
});

/** The agent's requests: permissions by svc's policy; svc offers it no files or terminals of its own. */
async function answer(method: string, params: Record<string, any>): Promise<unknown> {
  if (method === 'session/request_permission') return permission(params);
  throw new RpcError(-32601, `${method} is not offered by this client`);
}

/** Whether a path the agent names is inside the workspace (a relative one is the workspace's). */
function inside(path: unknown): boolean {
  if (typeof path !== 'string' || !path) return false;
  const within = relative(workspace, resolve(workspace, path));
  return within === '' || (!within.startsWith('..') && !isAbsolute(within));
}

/** Allowed when every place the tool names is in the workspace (a tool naming none runs in the sandbox's walls). */
function permission(params: Record<string, any>): unknown {
  const tool = params.toolCall ?? {};
  const paths: unknown[] = Array.isArray(tool.locations) ? tool.locations.map((entry: any) => entry?.path) : [];
  const allowed = paths.every(inside);
  const options: { optionId: string; kind: string }[] = Array.isArray(params.options) ? params.options : [];
  const pick = (kinds: string[]) =>
    kinds.map((kind) => options.find((option) => option?.kind === kind)).find((option) => option !== undefined);
  const option = allowed ? pick(['allow_once', 'allow_always']) : pick(['reject_once', 'reject_always']);
  emit({
    type: 'permission',
    title: typeof tool.title === 'string' ? tool.title : null,
    toolCallId: typeof tool.toolCallId === 'string' ? tool.toolCallId : null,
    decision: allowed && option ? 'allowed' : 'refused',
    paths: paths.filter((path) => typeof path === 'string'),
  });
  return option
    ? { outcome: { outcome: 'selected', optionId: option.optionId } }
    : { outcome: { outcome: 'cancelled' } };
}

// The agent's text arrives in chunks: kept until something else happens, then one line.
let message = '';
let thought = '';

function flushText(): void {
  for (const [type, text] of [
    ['message', message],
    ['thought', thought],
  ] as const)
    for (let offset = 0; offset < text.length; offset += MESSAGE_MAX)
      emit({ type, text: text.slice(offset, offset + MESSAGE_MAX) });
  message = '';
  thought = '';
}

/** Lines added and removed between two texts: what differs between their common head and tail. */
export function diffStats(before: string, after: string): { added: number; removed: number } {
  // A text's lines: a last line break ends the last line, it does not start another.
  const lines = (text: string) => (text === '' ? [] : text.replace(/\n$/, '').split('\n'));
  const a = lines(before);
  const b = lines(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  return { added: b.length - head - tail, removed: a.length - head - tail };
}

function toolCall(update: Record<string, any>): void {
  const content: any[] = Array.isArray(update.content) ? update.content : [];
  const edits = content
    .filter((entry) => entry?.type === 'diff' && typeof entry.path === 'string')
    .map((entry) => ({
      path: entry.path,
      ...diffStats(typeof entry.oldText === 'string' ? entry.oldText : '', String(entry.newText ?? '')),
      created: entry.oldText === null || entry.oldText === undefined,
    }));
  emit({
    type: 'tool_call',
    id: typeof update.toolCallId === 'string' ? update.toolCallId : null,
    kind: typeof update.kind === 'string' ? update.kind : null,
    title: typeof update.title === 'string' ? update.title : null,
    status: typeof update.status === 'string' ? update.status : null,
    locations: Array.isArray(update.locations)
      ? update.locations.map((entry: any) => entry?.path).filter((path: unknown) => typeof path === 'string')
      : [],
    update: update.sessionUpdate === 'tool_call_update',
  });
  for (const edit of edits) emit({ type: 'file_edit', ...edit });
}

function notified(method: string, params: Record<string, any>): void {
  if (method !== 'session/update') return;
  const update = params.update ?? {};
  const kind = update.sessionUpdate;
  if (kind === 'agent_message_chunk' || kind === 'agent_thought_chunk') {
    const text = update.content?.type === 'text' ? String(update.content.text ?? '') : '';
    if (kind === 'agent_message_chunk') message += text;
    else thought += text;
    return;
  }
  flushText();
  if (kind === 'tool_call' || kind === 'tool_call_update') return toolCall(update);
  if (kind === 'plan')
    return emit({
      type: 'plan',
      entries: (Array.isArray(update.entries) ? update.entries : []).map((entry: any) => ({
        content: String(entry?.content ?? ''),
        status: String(entry?.status ?? ''),
        priority: String(entry?.priority ?? ''),
      })),
    });
  if (kind === 'usage_update') return emit({ type: 'usage', used: update.used, size: update.size, cost: update.cost });
}

/** The exit the session's last turn means: an ordinary end is a success, a refusal is not. */
let lastStop = 'end_turn';
/** The session is over and svc closes the agent: its exit is expected. */
let closing = false;

const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
  agent.once('exit', (code, signal) => resolve({ code, signal })),
);
void exited.then(({ code, signal }) => {
  for (const waiting of pending.values()) waiting.reject(new Error('the agent ended'));
  pending.clear();
  if (!closing) {
    flushText();
    say(`the agent ended during its session (${signal ?? `exit ${code}`})`);
    if (signal) {
      process.removeAllListeners(signal);
      setTimeout(() => process.exit(128 + (constants.signals[signal] ?? 0)), 1000);
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code || 1);
  }
});

async function turn(sessionId: string, text: string): Promise<void> {
  const answered = await request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] });
  flushText();
  lastStop = typeof answered?.stopReason === 'string' ? answered.stopReason : 'end_turn';
  emit({ type: 'turn_ended', stopReason: lastStop });
}

async function session(): Promise<number> {
  const initialized = await request('initialize', {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: 'svc', version: '1' },
  });
  if (initialized?.protocolVersion !== PROTOCOL_VERSION) {
    say(`the agent speaks ACP version ${initialized?.protocolVersion}; svc speaks ${PROTOCOL_VERSION}`);
    return EXIT_PROTOCOL;
  }
  emit({ type: 'session', agent: initialized.agentInfo ?? null });
  const opened = await request('session/new', { cwd: workspace, mcpServers });
  const sessionId = String(opened?.sessionId ?? '');
  const queue: string[] = [];
  let running: Promise<void> | null = turn(sessionId, prompt);
  let quiet = 0;
  for (;;) {
    const messages: InboxMessage[] = steerable ? await claimInbox() : [];
    for (const steering of messages) {
      emit({ type: 'steer', priority: steering.priority });
      queue.push(steeringText(steering));
      // An urgent message does not wait for the turn: the turn is cancelled, then it is the next.
      if (steering.priority === 'urgent' && running) send({ method: 'session/cancel', params: { sessionId } });
    }
    if (running) {
      const done = await Promise.race([running.then(() => true), sleep(POLL_MS).then(() => false)]);
      if (done) running = null;
      else continue;
    }
    if (queue.length) {
      running = turn(sessionId, queue.shift()!);
      quiet = 0;
      continue;
    }
    // Idle: a second empty claim a while later catches a message steered just before the first.
    if (!steerable || ++quiet >= 2) break;
    await sleep(CLOSE_CONFIRM_MS);
  }
  return lastStop === 'refusal' ? 1 : 0;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

let code: number;
try {
  code = await session();
} catch (error) {
  flushText();
  const rpc = error instanceof RpcError ? ` (${error.code})` : '';
  say(`the session failed: ${(error as Error).message}${rpc}`);
  code = error instanceof RpcError ? EXIT_PROTOCOL : 1;
}
// The session is over: the agent's input closes, and it ends (or is stopped).
closing = true;
agent.stdin!.end();
const stop = setTimeout(() => agent.kill('SIGTERM'), 5000);
await Promise.race([exited, sleep(10_000)]);
clearTimeout(stop);
process.exit(code);
