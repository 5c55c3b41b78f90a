// The harness's steering half, for agents that take input while they run but cannot poll svc
// themselves (Claude Code's stream-json input): it holds the agent's stdin, hands it the prompt,
// polls the run's inbox (GET /runs/{id}/inbox, which claims) and writes each message into the
// agent's input as it arrives; when the agent has answered everything and the inbox is empty it
// closes the input, and the agent ends. Output passes through untouched. Runs inside the sandbox
// as the agent (bound read-only at /run/svc/bin/steer.mjs): it holds nothing the agent lacks, and
// reaches svc only through the run's callback routes. Self-contained on purpose (node: imports).
//   SVC_BASE_URL=… SVC_RUN_ID=… node steer.mjs <format> <command> [args…]   (the prompt on stdin)
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { StringDecoder } from 'node:string_decoder';
import type { SteeringFormat } from '../spec.ts';
import { claimInbox, steeringText, type InboxMessage } from './wire.ts';

interface Protocol {
  /** One message of the agent's input, newline-terminated. */
  encode(text: string): string;
  /** What an output line tells: the agent took one input message, or it finished a turn. */
  read(line: string): Seen;
  /** The same for a line too long to keep: judged by its first and last characters. */
  judgeCut(head: string, tail: string): Seen;
}

type Seen = 'taken' | 'turn_ended' | null;

const PROTOCOLS: Record<SteeringFormat, Protocol> = {
  // Claude Code with --input-format stream-json --replay-user-messages: each input message is
  // replayed (isReplay) when Claude Code takes it, mid-turn (with the next tool result) or as a new
  // turn; every turn ends with a `result` line.
  'claude-stream-json': {
    encode: (text) => `${JSON.stringify({ type: 'user', message: { role: 'user', content: text } })}\n`,
    read(line) {
      if (!line.startsWith('{')) return null;
      try {
        const parsed = JSON.parse(line) as { type?: unknown; isReplay?: unknown };
        if (parsed.type === 'user' && parsed.isReplay === true) return 'taken';
        return parsed.type === 'result' ? 'turn_ended' : null;
      } catch {
        return null;
      }
    },
    // Claude Code writes compact JSON, `type` first and `isReplay` last.
    judgeCut(head, tail) {
      if (head.startsWith('{"type":"result"')) return 'turn_ended';
      return head.startsWith('{"type":"user"') && /"isReplay":true\}\s*$/.test(tail) ? 'taken' : null;
    },
  },
};

/** How often the inbox is asked while the agent works (at most a second). */
const POLL_MS = Math.max(100, Number(process.env.SVC_INBOX_POLL_INTERVAL_MS) || 500);
/** Between the two empty claims that let the relay close an idle agent's input. */
const CLOSE_CONFIRM_MS = 1000;

const [format, command, ...args] = process.argv.slice(2);
const protocol = PROTOCOLS[format as SteeringFormat];
if (!protocol || !command) {
  process.stderr.write(`usage: steer.mjs <${Object.keys(PROTOCOLS).join('|')}> <command> [args…]\n`);
  process.exit(2);
}

function say(message: string): void {
  process.stderr.write(`svc steering: ${message}\n`);
}

let prompt = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) prompt += chunk;

const agent = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
let inputOpen = true;
/** Messages written that the agent has not yet taken. */
let untaken = 0;
/** Claimed (so marked delivered by svc) but never written: the agent had ended. */
let unwritten = 0;
let steersWritten = 0;
/** The agent finished a turn and has taken everything written: only an empty inbox is left to learn. */
let idle = false;
let wake: (() => void) | undefined;
/** A turn ended with input untaken and no sign of the agent taking it since: after this, it is idle anyway. */
const UNTAKEN_GRACE_MS = Number(process.env.SVC_STEERING_GRACE_MS) || 15_000;
let graceTimer: NodeJS.Timeout | undefined;

function write(text: string): void {
  if (!inputOpen) {
    unwritten += 1;
    return;
  }
  untaken += 1;
  idle = false;
  clearTimeout(graceTimer);
  agent.stdin!.write(protocol.encode(text));
}

function closeInput(): void {
  if (!inputOpen) return;
  inputOpen = false;
  agent.stdin!.end();
}

agent.stdin!.on('error', () => (inputOpen = false));
agent.once('error', (error) => {
  say(error.message);
  process.exit((error as NodeJS.ErrnoException).code === 'ENOENT' ? 127 : 126);
});
for (const name of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
  // A stop is the agent's: it ends, and the relay ends as it did.
  process.on(name, () => agent.kill(name));
}
const outputEnded = new Promise<void>((resolve) => agent.stdout!.once('end', resolve));
agent.once('exit', async (code, signal) => {
  inputOpen = false;
  wake?.();
  // Its last lines (the result) still in the pipe go out first; a child holding the pipe is not waited for.
  await Promise.race([outputEnded, new Promise((resolve) => setTimeout(resolve, 2000))]);
  // A claim under way may bring messages svc now counts delivered: they are counted below.
  await claiming;
  await new Promise((resolve) => setImmediate(resolve));
  // svc recorded these delivered when they were claimed: the run's log says they never got in.
  // Input is taken in order: what is left untaken is the latest written (the prompt is the first).
  const lost = Math.min(untaken, steersWritten) + unwritten;
  if (lost > 0) say(`${lost} steering message(s) claimed for the agent never reached it: it ended first`);
  if (signal) {
    // Die of the same signal; one Node ignores or handles (SIGPIPE, SIGXFSZ) ends the shell's way.
    process.removeAllListeners(signal);
    setTimeout(() => process.exit(128 + (constants.signals[signal] ?? 0)), 1000);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});

function armGrace(): void {
  clearTimeout(graceTimer);
  graceTimer = setTimeout(() => {
    untaken = 0;
    turnEnded();
  }, UNTAKEN_GRACE_MS);
}

function turnEnded(): void {
  // Claude Code starts a turn for input it holds at once, and replays it first.
  if (untaken > 0) return armGrace();
  clearTimeout(graceTimer);
  graceTimer = undefined;
  idle = true;
  wake?.();
}

/** The longest line parsed whole; a longer one is judged by its head and tail (a replayed long prompt). */
const LINE_MAX = 256 * 1024;
const decoder = new StringDecoder('utf8');
let line = '';
let head = '';
let overflowed = false;

function judge(text: string): void {
  const seen = overflowed ? protocol.judgeCut(head, text.slice(-256)) : protocol.read(text);
  if (seen === 'turn_ended') return turnEnded();
  if (seen === 'taken') {
    untaken = Math.max(0, untaken - 1);
    // Taken: a turn is under way, and its end will say whether all is in.
    clearTimeout(graceTimer);
    graceTimer = undefined;
  } else if (graceTimer) armGrace();
}

// Output goes on as it came; a copy is read line by line for what the agent took and when it idles.
agent.stdout!.on('data', (chunk: Buffer) => {
  if (!process.stdout.write(chunk)) {
    agent.stdout!.pause();
    process.stdout.once('drain', () => agent.stdout!.resume());
  }
  const pieces = decoder.write(chunk).split('\n');
  for (let index = 0; index < pieces.length; index++) {
    line += pieces[index];
    if (index < pieces.length - 1) {
      judge(line);
      line = '';
      head = '';
      overflowed = false;
    } else if (line.length > LINE_MAX) {
      head ||= line.slice(0, 256);
      overflowed = true;
      line = line.slice(-256);
    }
  }
});

/** The claim under way, if any (settles within CLAIM_TIMEOUT_MS). */
let claiming: Promise<unknown> = Promise.resolve();

/** Claims the unread messages; none when svc cannot be asked (the next poll asks again). */
function claim(): Promise<InboxMessage[]> {
  const claimed = claimInbox();
  claiming = claimed;
  return claimed;
}

/** Waits the poll interval, or less when the agent ends a turn (or ends). */
function pause(ms: number, wakeable: boolean): Promise<void> {
  return new Promise<void>((resolve) => {
    if (wakeable) wake = resolve;
    setTimeout(resolve, ms);
  }).then(() => void (wake = undefined));
}

write(prompt);
/** Empty claims in a row while the agent idled. */
let quietClaims = 0;
while (inputOpen) {
  // Read before the claim: a turn that ends while it is under way is seen by the next round.
  const wasIdle = idle;
  const messages = await claim();
  for (const message of messages) {
    write(steeringText(message));
    if (inputOpen) steersWritten += 1;
  }
  if (wasIdle && idle && messages.length === 0) {
    // svc answers an empty claim from its read model, a projection behind the run's inbox: a
    // second look a while later catches a message steered just before the first.
    if (++quietClaims >= 2) closeInput();
    else await pause(CLOSE_CONFIRM_MS, false);
    continue;
  }
  quietClaims = 0;
  // The turn ended during the claim: ask again at once.
  if (!wasIdle && idle) continue;
  await pause(POLL_MS, true);
}
