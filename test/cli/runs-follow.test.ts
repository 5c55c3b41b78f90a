// `svc runs logs`: the history, `--follow` attaching again to a live run and ending with it (its exit
// code the run's end), a reader that closes the pipe, and the one-line failures (a refused
// connection, a refused token) with no stack trace.
import test from 'ava';
import { spawn } from 'node:child_process';
import { remote, svcCli } from '../support/cli.ts';
import { freePort } from '../support/free-port.ts';
import { spawnSvc, waitForOutput } from '../support/processes.ts';
import { startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

let svc: TestStack;
test.before(async () => {
  svc = await startTestStack();
});
test.after.always(() => svc?.stop());

async function dispatch(prompt: string): Promise<string> {
  const answer = await svc.request('POST', '/runs', { body: { agent: 'shell', prompt } });
  if (answer.status !== 201) throw new Error(`POST /runs answered ${answer.status}: ${answer.text}`);
  return answer.body.run.id;
}

/** A shell pipeline's exit code of svc (pipefail), its stdout and stderr. */
function pipeline(svcArgs: string[], reader: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const quoted = svcArgs.map((arg) => `'${arg.replace(/'/g, `'\\''`)}'`).join(' ');
  const script = `set -o pipefail; node --no-warnings cli/main.ts ${quoted} | ${reader}`;
  const child = spawn('bash', ['-c', script], { env: { ...process.env, SVC_CLIENT_CONFIG: '/nonexistent' } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

test.serial('--follow attaches again after a Ctrl-C and ends with the run, exiting by its end state', async (t) => {
  const id = await dispatch('echo one\nsleep 4\necho two\nsleep 4\necho three');
  const first = spawnSvc(['runs', 'logs', id, '--follow', ...remote(svc)], {
    ...process.env,
    SVC_CLIENT_CONFIG: '/nonexistent',
  });
  await waitForOutput(first, /^\d\d:\d\d:\d\d one$/m);
  first.child.kill('SIGINT');
  t.is(await first.exited, 130, first.output());
  t.regex(first.output(), new RegExp(`svc: detached from ${id}; it goes on`));
  t.is((await svc.request('GET', `/runs/${id}`)).body.run.state, 'running', 'detaching leaves the run be');

  const again = await svcCli(['runs', 'logs', id, '-f', ...remote(svc)]);
  t.is(again.code, 0, again.stderr);
  const lines = again.stdout.trimEnd().split('\n');
  t.deepEqual(
    lines.filter((line) => /^\d\d:\d\d:\d\d (one|two|three)$/.test(line)).map((line) => line.slice(9)),
    ['one', 'two', 'three'],
    'the history first, then the live lines',
  );
  t.regex(lines.at(-1)!, /^\d\d:\d\d:\d\d Run succeeded/);

  const failing = await dispatch('sleep 2\nexit 7');
  const failed = await svcCli(['runs', 'logs', failing, '--follow', '--output', 'ndjson', ...remote(svc)]);
  t.is(failed.code, 1, 'a failed run: 1');
  t.like(failed.lines.at(-1), { kind: 'state_change', payload: { state: 'failed' } });

  const slow = await dispatch('sleep 300');
  await waitForRunState(svc, slow, ['running']);
  const following = svcCli(['runs', 'logs', slow, '--follow', '--output', 'json', ...remote(svc)]);
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  await svc.request('POST', `/runs/${slow}/cancel`, { body: {} });
  const cancelled = await following;
  t.is(cancelled.code, 5, 'a cancelled run: 5');
  const events = JSON.parse(cancelled.stdout);
  t.like(events.at(-1), { kind: 'state_change', payload: { state: 'cancelled' } });

  const history = await svcCli(['runs', 'logs', failing, ...remote(svc)]);
  t.is(history.code, 0, 'without --follow: printed, whatever the run did');
});

test.serial('a reader that closes the pipe ends svc quietly', async (t) => {
  const id = await dispatch('seq 1 3000');
  await waitForRunState(svc, id);
  for (const args of [
    ['runs', 'logs', id],
    ['runs', 'logs', id, '--follow', '--output', 'ndjson'],
    ['runs', 'list', '--output', 'ndjson'],
    ['run', 'shell', '-p', 'seq 1 3000', '--output', 'pretty'],
  ]) {
    const piped = await pipeline([...args, ...remote(svc)], 'head -1');
    t.is(piped.code, 0, `${args.join(' ')}: ${piped.stderr}`);
    t.is(piped.stderr, '', args.join(' '));
    t.is(piped.stdout.split('\n').length, 2, 'one line, then the end');
  }
  const live = await dispatch('while true; do echo tick; sleep 0.1; done');
  const closed = await pipeline(['runs', 'logs', live, '-f', ...remote(svc)], 'head -3');
  t.is(closed.code, 0, closed.stderr);
  t.is(closed.stderr, '');
  await svc.request('POST', `/runs/${live}/cancel`, { body: {} });
});

test.serial('a refused connection, a refused token and an API error are one line each and an exit code', async (t) => {
  const port = await freePort();
  const refused = await svcCli(['runs', 'list', `--url=http://127.0.0.1:${port}`]);
  t.is(refused.code, 3);
  t.is(refused.stdout, '');
  t.regex(refused.stderr, new RegExp(`^svc: \\[unreachable\\] cannot reach http://127.0.0.1:${port}: .*ECONNREFUSED`));
  t.is(refused.stderr.trimEnd().split('\n').length, 2, 'the message and its hint');
  t.notRegex(refused.stderr, /^\s+at /m, 'no stack trace');
  const followRefused = await svcCli(['runs', 'logs', 'run_000000000000', '-f', `--url=http://127.0.0.1:${port}`]);
  t.is(followRefused.code, 3);
  t.notRegex(followRefused.stderr, /^\s+at /m);

  const badToken = await svcCli(['runs', 'list', `--url=${svc.url}`, '--token=wrong']);
  t.is(badToken.code, 4);
  t.regex(badToken.stderr, /^svc: \[unauthorized\] invalid bearer token$/m);
  const noRun = await svcCli(['runs', 'logs', 'run_000000000000', ...remote(svc)]);
  t.is(noRun.code, 2);
  t.regex(noRun.stderr, /^svc: \[not_found\] run "run_000000000000" not found$/m);
  t.notRegex(noRun.stderr + badToken.stderr, /^\s+at /m);
});

test('help names option values and gives examples, uncoloured into a pipe', async (t) => {
  for (const command of [['runs', 'list'], ['runs', 'logs'], ['run'], ['login'], ['plan', 'run'], ['doctor']]) {
    const help = await svcCli([...command, '--help']);
    t.is(help.code, 0);
    t.notRegex(help.stdout, /#\d/, command.join(' '));
    t.regex(help.stdout, /--output <pretty\|json\|ndjson> {2,}\S/, command.join(' '));
    t.regex(help.stdout, /^Examples$/m, command.join(' '));
    t.notRegex(help.stdout, /\u001b/, 'no escape sequences into a pipe');
  }
  const help = await svcCli(['runs', 'list', '--help']);
  t.regex(help.stdout, /--limit <n> +at most/);
  const usage = await svcCli(['runs', 'logs']);
  t.is(usage.code, 2);
  t.notRegex(usage.stdout + usage.stderr, /#\d/);
});
