// svc in a real terminal (tmux): colours on a TTY only, and an agent's escape sequences shown as
// text, not obeyed, unless --raw.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { svcCli, remote } from '../support/cli.ts';
import { startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

const socket = `svc-test-${randomBytes(4).toString('hex')}`;
const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });

let svc: TestStack;
let run: string;
test.before(async () => {
  svc = await startTestStack();
  // Red text, a retitle and a carriage return that would hide the line it follows.
  const prompt = String.raw`printf '\033[31mred\033[0m\n\033]0;pwned\007title\nhidden\rshown\n'`;
  run = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt } })).body.run.id;
  await waitForRunState(svc, run);
});
test.after.always(async () => {
  try {
    tmux('kill-server');
  } catch {
    // no server left: nothing to stop
  }
  await svc?.stop();
});

/** Runs svc in a fresh tmux window and answers its screen: as text, and with its colours (`-e`). */
async function onScreen(name: string, args: string[]): Promise<{ text: string; coloured: string }> {
  const command = [process.execPath, '--no-warnings', 'cli/main.ts', ...args, ...remote(svc)]
    .map((arg) => `'${arg.replace(/'/g, `'\\''`)}'`)
    .join(' ');
  tmux(
    'new-session',
    '-d',
    '-s',
    name,
    '-x',
    '200',
    '-y',
    '40',
    '-e',
    'TERM=xterm-256color',
    '-e',
    'NO_COLOR=',
    '-e',
    'SVC_CLIENT_CONFIG=/nonexistent',
    `${command}; echo "exit=$?"; sleep 60`,
  );
  const deadline = Date.now() + 30_000;
  let text = '';
  while (Date.now() < deadline && !/exit=\d+/.test(text)) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    text = tmux('capture-pane', '-p', '-t', name);
  }
  return { text, coloured: tmux('capture-pane', '-p', '-e', '-t', name) };
}

test.serial("an agent's escape sequences are shown as text; svc's own colours only on a terminal", async (t) => {
  const screen = await onScreen('escaped', ['runs', 'logs', run]);
  t.regex(screen.text, /exit=0/);
  t.regex(screen.text, /^\d\d:\d\d:\d\d \\x1b\[31mred\\x1b\[0m$/m, screen.text);
  t.regex(screen.text, /^\d\d:\d\d:\d\d \\x1b\]0;pwned\\x07title$/m);
  t.regex(screen.text, /^\d\d:\d\d:\d\d hidden\\x0dshown$/m, 'the carriage return hides nothing');
  t.notRegex(screen.coloured, /\u001b\[31mred/, "the agent's red is not obeyed");
  t.regex(screen.coloured, /\u001b\[32m(\u001b\[\d+m)*\d\d:\d\d:\d\d Run succeeded/, "svc's green for the run's end");

  const raw = await onScreen('raw', ['runs', 'logs', run, '--raw']);
  t.regex(raw.coloured, /\u001b\[31m(\u001b\[\d+m)*red/, '--raw passes the sequences through');
  t.notRegex(raw.text, /\\x1b/);

  const piped = await svcCli(['runs', 'logs', run, ...remote(svc)]);
  t.notRegex(piped.stdout, /\u001b/, 'no colours into a pipe');
  t.regex(piped.stdout, /\\x1b\[31mred/);

  const table = await onScreen('table', ['runs', 'list']);
  t.regex(table.coloured, /\u001b\[1mID +STATE/, 'a bold header on a terminal');
  t.regex(table.coloured, new RegExp(`\u001b\\[32m(\u001b\\[\\d+m)*${run} +succeeded`), "a row in its state's colour");
});
