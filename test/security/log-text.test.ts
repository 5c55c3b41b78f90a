// An agent's output in the text log (GET /runs/{id}/log, core/event-log-line.ts) obeys nobody: no
// control character, escape sequence or line break of the agent's survives into the line, whatever
// event carries it (its own output, or a value svc quotes in one of its lines).
import test from 'ava';
import { inertText, plainLogLine } from '../../core/event-log-line.ts';

const HOSTILE = [
  '\u001b]0;title\u0007',
  '\u001b]8;;https://evil.example/\u001b\\link\u001b]8;;\u001b\\',
  '\u001b[2J\u001b[H\u001b[5A',
  'line\r\nforged 2026-01-01T00:00:00.000Z svc   Run succeeded',
  '\u009b31m\u0085\u2028\u2029\u0000\u007f',
].join(' ');
const ts = '2026-12-02T10:00:00.123Z';

test('no control character of an agent reaches a log line, in output or in svc lines quoting it', (t) => {
  for (const event of [
    { kind: 'log.stdout', stream: 'stdout', payload: { text: HOSTILE } },
    { kind: 'log.stderr', stream: 'stderr', payload: { text: HOSTILE } },
    { kind: 'assistant', stream: 'stdout', payload: { text: HOSTILE } },
    { kind: 'tool_use', stream: 'stdout', payload: { name: HOSTILE, input: { command: HOSTILE } } },
    { kind: 'agent.user_message', stream: 'stdout', payload: { text: HOSTILE } },
    { kind: `agent.${HOSTILE}`, stream: 'stdout', payload: { x: HOSTILE } },
    { kind: 'preview.failed', stream: 'system', payload: { message: HOSTILE } },
  ]) {
    const line = plainLogLine({ ...event, ts });
    t.false(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(line), `${event.kind}: ${JSON.stringify(line)}`);
    t.true(line.startsWith(`${ts} `));
  }
});

test('colours are dropped; other sequences are written out, visibly', (t) => {
  t.is(inertText('\u001b[1;31mred\u001b[0m'), 'red');
  t.is(inertText('a\u001b]0;t\u0007b'), 'a\\e]0;t\\u0007b');
  t.is(inertText('one\ntwo\r'), 'one\\ntwo\\r');
  t.is(inertText('tab\tkept'), 'tab\tkept');
});

test("an agent's own report is tagged as the agent's, never as svc's", (t) => {
  const ts = '2026-12-02T10:00:00.000Z';
  t.is(
    plainLogLine({ ts, kind: 'agent.permission', payload: { title: 'Write a.ts', decision: 'allowed' } }),
    `${ts} agent Permission allowed: Write a.ts`,
  );
  t.is(plainLogLine({ ts, kind: 'state_change', payload: { state: 'running' } }), `${ts} svc   Agent running`);
});
