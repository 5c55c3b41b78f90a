// svc's Agent Client Protocol client, in front of an agent that speaks ACP (JSON-RPC over its
// stdio): it opens one session in the workspace with the run's MCP servers, sends the prompt as the
// first turn, answers the agent's permission requests by svc's policy (inside the workspace yes,
// anything else no: never a question that would block the run), and prints what the agent reports
// as one JSON line each (`{"acp": …}`) for svc's runtime adapter (activities/runtimes/acp.ts).
// Steerable, it claims the run's inbox while the agent works: each message is the next turn, an
// urgent one cancels the turn under way first. Once a turn has ended and the inbox is empty, it
// closes the agent's input and ends as the session did. Runs inside the sandbox as the agent
// (bound read-only at /run/svc/bin/acp.mjs): it holds nothing the agent lacks, and everything the
// agent says is bounded here before it becomes a line (the adapter bounds it again: the agent can
// write to this program's output itself).
//   SVC_ACP_MCP='[…]' SVC_ACP_STEERING=1 node acp.mjs <command> [args…]   (the prompt on stdin)
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import { delimiter, isAbsolute, join, relative, resolve } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { claimInbox, steeringText, type InboxMessage } from './wire.ts';

/** The protocol version svc speaks (ACP's stable one). */
const PROTOCOL_VERSION = 1;
/** How often the inbox is asked while the agent works. */
const POLL_MS = Math.max(100, Number(process.env.SVC_INBOX_POLL_INTERVAL_MS) || 500);
/** Between the two empty claims that end an idle session. */
const CLOSE_CONFIRM_MS = 1000;
/** How much of an agent message one line carries; the rest follows in further lines. */
const MESSAGE_MAX = 16_000;
/** A message still streaming is shown this often, not only when it ends. */
const MESSAGE_FLUSH_MS = 2000;
/** The longest protocol message taken; a longer one is dropped (the agent's memory, not svc's). */
const RPC_LINE_MAX = 4 * 1024 * 1024;
/** Exit codes of svc's own: the agent did not speak ACP as svc does, or its turn stopped at a limit. */
const EXIT_PROTOCOL = 3;
const EXIT_LIMIT = 4;

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

function parseServers(text: string | undefined): Record<string, any>[] {
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
function emit(type: string, record: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ acp: type, ...record })}\n`);
}

/** A string the agent gave, at most `max` characters, or null. */
const text = (value: unknown, max: number): string | null =>
  typeof value === 'string' ? (value.length > max ? `${value.slice(0, max)}…` : value) : null;
/** A finite number the agent gave, or null. */
const finite = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

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

class RpcError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

function send(message: Record<string, unknown>): boolean {
  if (!agent.stdin!.writable) return false;
  agent.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
  return true;
}

function request(method: string, params: unknown): Promise<any> {
  const id = nextId++;
  if (!send({ id, method, params })) return Promise.reject(new Error(`the agent's input is closed (${method})`));
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}

// The agent's output, line by line; a line past RPC_LINE_MAX is dropped whole.
const decoder = new StringDecoder('utf8');
let partial = '';
let oversized = false;
agent.stdout!.on('data', (chunk: Buffer) => {
  const pieces = decoder.write(chunk).split('\n');
  for (let index = 0; index < pieces.length; index++) {
    const last = index === pieces.length - 1;
    if (!oversized) partial += pieces[index];
    if (!oversized && partial.length > RPC_LINE_MAX) {
      say(`a message of the agent over ${RPC_LINE_MAX} characters was dropped`);
      oversized = true;
      partial = '';
    }
    if (last) break;
    if (!oversized) received(partial);
    partial = '';
    oversized = false;
  }
});

function received(line: string): void {
  let message: Record<string, any>;
  try {
    message = JSON.parse(line);
  } catch {
    // Not the protocol: the agent's own output, kept as its log.
    if (line.trim()) process.stdout.write(`${line}\n`);
    return;
  }
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return;
  if (message.method === undefined && typeof message.id === 'number') {
    const waiting = pending.get(message.id);
    pending.delete(message.id);
    if (message.error)
      waiting?.reject(new RpcError(finite(message.error.code) ?? 0, text(message.error.message, 2000) ?? 'error'));
    else waiting?.resolve(message.result);
    return;
  }
  if (typeof message.method !== 'string') return;
  if (message.id === undefined) return notified(message.method, message.params ?? {});
  try {
    send({ id: message.id, result: answer(message.method, message.params ?? {}) });
  } catch (error) {
    send({ id: message.id, error: { code: (error as RpcError).code ?? -32603, message: (error as Error).message } });
  }
}

/** The agent's requests: permissions by svc's policy; svc offers it no files or terminals of its own. */
function answer(method: string, params: Record<string, any>): unknown {
  if (method === 'session/request_permission') return permission(params);
  throw new RpcError(-32601, `${text(method, 100)} is not offered by this client`);
}

/** Whether a path the agent names is inside the workspace (a relative one is the workspace's). */
function inside(path: unknown): boolean {
  if (typeof path !== 'string' || !path) return false;
  const within = relative(workspace, resolve(workspace, path));
  return within === '' || (!within.startsWith('..') && !isAbsolute(within));
}

/** svc cancelled the turn under way: what the agent still asks is answered `cancelled` (ACP's rule). */
let cancelling = false;

/** Allowed when every place the tool names is in the workspace (a tool naming none runs in the sandbox's walls). */
function permission(params: Record<string, any>): unknown {
  const tool = params.toolCall ?? {};
  const locations: unknown[] = Array.isArray(tool.locations) ? tool.locations.slice(0, 50) : [];
  const paths = locations.map((entry) => (entry && typeof entry === 'object' ? (entry as any).path : undefined));
  const options: any[] = Array.isArray(params.options) ? params.options : [];
  const pick = (kinds: string[]) =>
    kinds.map((kind) => options.find((option) => option?.kind === kind)).find((option) => option !== undefined);
  const allowed = !cancelling && paths.every(inside);
  const option = cancelling
    ? undefined
    : allowed
      ? pick(['allow_once', 'allow_always'])
      : pick(['reject_once', 'reject_always']);
  const decision = allowed && option ? 'allowed' : 'refused';
  emit('permission', {
    title: text(tool.title, 500),
    toolCallId: text(tool.toolCallId, 200),
    decision,
    reason:
      decision === 'allowed'
        ? null
        : cancelling
          ? 'the turn is cancelled'
          : allowed
            ? 'no option to allow it'
            : 'outside the workspace',
    paths: paths.map((path) => text(path, 1000)).filter((path) => path !== null),
  });
  return option && typeof option.optionId === 'string'
    ? { outcome: { outcome: 'selected', optionId: option.optionId } }
    : { outcome: { outcome: 'cancelled' } };
}

// The agent's text arrives in chunks: kept until something else happens, it grows past a line, or
// a while passes, then printed.
let message = '';
let thought = '';
let flushTimer: NodeJS.Timeout | undefined;

/** Where a long text is cut: at its last line break or space before `max`, never inside a character. */
function cutAt(value: string, max: number): number {
  if (value.length <= max) return value.length;
  const space = Math.max(value.lastIndexOf('\n', max), value.lastIndexOf(' ', max));
  if (space > max / 2) return space + 1;
  const code = value.charCodeAt(max - 1);
  return code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
}

function flushText(all = true): void {
  clearTimeout(flushTimer);
  flushTimer = undefined;
  for (const kind of ['message', 'thought'] as const) {
    let rest = kind === 'message' ? message : thought;
    while (rest.length >= MESSAGE_MAX || (all && rest.length)) {
      const end = cutAt(rest, MESSAGE_MAX);
      emit(kind, { text: rest.slice(0, end) });
      rest = rest.slice(end);
    }
    if (kind === 'message') message = rest;
    else thought = rest;
  }
}

/** Lines added and removed between two texts: what differs between their common head and tail. */
export function diffStats(before: string, after: string): { added: number; removed: number } {
  // A text's lines: a last line break ends the last line, it does not start another.
  const lines = (value: string) => (value === '' ? [] : value.replace(/\n$/, '').split('\n'));
  const a = lines(before);
  const b = lines(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  return { added: b.length - head - tail, removed: a.length - head - tail };
}

/** Edits already reported (a tool call's diff may come again on a later update). */
const reportedEdits = new Set<string>();

function toolCall(update: Record<string, any>): void {
  const id = text(update.toolCallId, 200);
  const status = text(update.status, 40);
  emit('tool_call', {
    id,
    kind: text(update.kind, 40),
    title: text(update.title, 500),
    status,
    locations: (Array.isArray(update.locations) ? update.locations.slice(0, 20) : [])
      .map((entry: any) => text(entry?.path, 1000))
      .filter((path: string | null) => path !== null),
    update: update.sessionUpdate === 'tool_call_update',
  });
  // An edit is the agent's once its call completed (a pending one may be refused, a failed one undone).
  if (status !== 'completed') return;
  const content: unknown[] = Array.isArray(update.content) ? update.content.slice(0, 100) : [];
  for (const entry of content as any[]) {
    if (entry?.type !== 'diff' || typeof entry.path !== 'string' || typeof entry.newText !== 'string') continue;
    const key = `${id}\u0000${entry.path}`;
    if (reportedEdits.has(key)) continue;
    reportedEdits.add(key);
    const oldText = typeof entry.oldText === 'string' ? entry.oldText : '';
    emit('file_edit', {
      path: text(entry.path, 1000),
      ...diffStats(oldText, entry.newText),
      created: entry.oldText === null || entry.oldText === undefined,
    });
  }
}

function notified(method: string, params: Record<string, any>): void {
  if (method !== 'session/update') return;
  const update = params.update ?? {};
  const kind = update.sessionUpdate;
  if (kind === 'agent_message_chunk' || kind === 'agent_thought_chunk') {
    const chunk = update.content?.type === 'text' && typeof update.content.text === 'string' ? update.content.text : '';
    if (kind === 'agent_message_chunk') message += chunk;
    else thought += chunk;
    flushText(false);
    flushTimer ??= setTimeout(() => flushText(), MESSAGE_FLUSH_MS);
    return;
  }
  flushText();
  if (kind === 'tool_call' || kind === 'tool_call_update') return toolCall(update);
  if (kind === 'plan')
    return emit('plan', {
      entries: (Array.isArray(update.entries) ? update.entries.slice(0, 50) : []).map((entry: any) => ({
        content: text(entry?.content, 500) ?? '',
        status: text(entry?.status, 40) ?? '',
        priority: text(entry?.priority, 40) ?? '',
      })),
    });
  if (kind === 'usage_update') {
    const cost = update.cost && typeof update.cost === 'object' ? update.cost : null;
    return emit('usage', {
      used: finite(update.used),
      size: finite(update.size),
      cost:
        cost && finite(cost.amount) !== null
          ? { amount: finite(cost.amount), currency: text(cost.currency, 10) }
          : null,
    });
  }
}

/** How the session's last turn ended. */
let lastStop = 'end_turn';
/** The session is over and svc closes the agent: its exit is expected. */
let closing = false;
/** Steering messages claimed (svc counts them delivered) and not yet sent as a turn. */
const queue: { text: string; priority: string }[] = [];

function reportUnsent(): void {
  if (queue.length)
    say(`${queue.length} steering message(s) claimed for the agent never reached it: the session ended first`);
}

const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
  agent.once('exit', (code, signal) => resolve({ code, signal })),
);
void exited.then(({ code, signal }) => {
  for (const waiting of pending.values()) waiting.reject(new Error('the agent ended'));
  pending.clear();
  if (closing) return;
  flushText();
  say(`the agent ended during its session (${signal ?? `exit ${code}`})`);
  reportUnsent();
  if (signal) {
    process.removeAllListeners(signal);
    setTimeout(() => process.exit(128 + (constants.signals[signal] ?? 0)), 1000);
    process.kill(process.pid, signal);
    return;
  }
  // Ending on its own before its session did is not a success, whatever its code.
  process.exit(code || 1);
});

/** One prompt turn; its outcome, never a rejection (a turn that fails ends the session). */
async function turn(sessionId: string, body: string): Promise<Error | null> {
  try {
    const answered = await request('session/prompt', { sessionId, prompt: [{ type: 'text', text: body }] });
    flushText();
    lastStop = text(answered?.stopReason, 40) ?? 'end_turn';
    emit('turn_ended', { stopReason: lastStop });
    return null;
  } catch (error) {
    return error as Error;
  } finally {
    cancelling = false;
  }
}

/** A stdio server's command as ACP wants it: an absolute path (on the sandbox's PATH, or the workspace's). */
function absoluteCommand(name: unknown): unknown {
  if (typeof name !== 'string' || isAbsolute(name)) return name;
  if (name.includes('/')) return resolve(workspace, name);
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, name);
    try {
      if (dir && existsSync(candidate) && statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return name;
}

/** The run's MCP servers the agent can take: an HTTP one only where it says it speaks HTTP. */
function sessionServers(capabilities: Record<string, any>): unknown[] {
  const http = capabilities?.mcpCapabilities?.http === true;
  const kept = mcpServers.filter((server) => server.type !== 'http' || http);
  const dropped = mcpServers.filter((server) => !kept.includes(server)).map((server) => String(server.name));
  if (dropped.length) say(`the agent takes no HTTP MCP servers: ${dropped.join(', ')} left out`);
  return kept.map((server) =>
    server.type === 'http' ? server : { ...server, command: absoluteCommand(server.command) },
  );
}

async function session(): Promise<number> {
  const initialized = await request('initialize', {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: 'svc', version: '1' },
  });
  if (initialized?.protocolVersion !== PROTOCOL_VERSION) {
    say(
      `the agent speaks ACP version ${text(String(initialized?.protocolVersion), 20)}; svc speaks ${PROTOCOL_VERSION}`,
    );
    return EXIT_PROTOCOL;
  }
  const info = initialized.agentInfo ?? {};
  emit('session', { agent: { name: text(info.name, 100), version: text(info.version, 100) } });
  let opened;
  try {
    opened = await request('session/new', {
      cwd: workspace,
      mcpServers: sessionServers(initialized.agentCapabilities),
    });
  } catch (error) {
    const methods = Array.isArray(initialized.authMethods) ? initialized.authMethods : [];
    if (error instanceof RpcError && error.code === -32000 && methods.length)
      say(
        `the agent asks to sign in first (${methods.map((method: any) => text(method?.id, 100)).join(', ')}); ` +
          "svc signs no ACP agent in: give it its credential in its env or as the project's run secret",
      );
    throw error;
  }
  const sessionId = String(opened?.sessionId ?? '');
  let running: Promise<Error | null> | null = turn(sessionId, prompt);
  let turnUnderWay = true;
  void running.then(() => (turnUnderWay = false));
  let quiet = 0;
  for (;;) {
    const messages: InboxMessage[] = steerable ? await claimInbox() : [];
    for (const steering of messages) {
      const item = { text: steeringText(steering), priority: steering.priority };
      // An urgent message does not wait: the turn under way is cancelled, and it is the next.
      if (steering.priority !== 'urgent') queue.push(item);
      else {
        queue.unshift(item);
        if (turnUnderWay && !cancelling) {
          cancelling = true;
          send({ method: 'session/cancel', params: { sessionId } });
        }
      }
    }
    if (running) {
      const done = await Promise.race([running, sleep(POLL_MS).then(() => 'waiting' as const)]);
      if (done === 'waiting') continue;
      running = null;
      if (done) throw done;
    }
    const next = queue.shift();
    if (next) {
      emit('steer', { priority: next.priority });
      running = turn(sessionId, next.text);
      turnUnderWay = true;
      void running.then(() => (turnUnderWay = false));
      quiet = 0;
      continue;
    }
    // Idle: a second empty claim a while later catches a message steered just before the first.
    if (!steerable || ++quiet >= 2) break;
    await sleep(CLOSE_CONFIRM_MS);
  }
  if (lastStop === 'end_turn') return 0;
  if (lastStop === 'max_tokens' || lastStop === 'max_turn_requests') {
    say(`the agent's last turn stopped at its limit (${lastStop}): its work may be unfinished`);
    return EXIT_LIMIT;
  }
  say(`the agent's last turn ended ${lastStop.replaceAll('_', ' ')}`);
  return 1;
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
  reportUnsent();
  code = error instanceof RpcError ? EXIT_PROTOCOL : 1;
}
// The session is over: the agent's input closes, and it ends (or is stopped).
closing = true;
agent.stdin!.end();
const stop = setTimeout(() => agent.kill('SIGTERM'), 5000);
await Promise.race([exited, sleep(10_000)]);
clearTimeout(stop);
process.exit(code);
