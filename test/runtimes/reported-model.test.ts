// The model a run's agent says it runs, read from its own output by each runtime that reports one
// (the lines as the real CLIs print them, trimmed), and held to what svc can keep: a hostile
// agent's claim that is no short printable name is not recorded.
import test from 'ava';
import { claudeCodeRuntime } from '../../activities/runtimes/claude-code.ts';
import { codexRuntime } from '../../activities/runtimes/codex.ts';
import { commandRuntime } from '../../activities/runtimes/command.ts';
import { openCodeRuntime } from '../../activities/runtimes/opencode.ts';
import { initialRuntimeState, type RuntimeAdapter } from '../../activities/runtimes/types.ts';

const read = (runtime: RuntimeAdapter, lines: string[]) => {
  const state = initialRuntimeState();
  for (const line of lines) runtime.parseLine('stdout', line, state);
  return state.model;
};

test('Claude Code: its init line names the model it resolved', (t) => {
  const init =
    '{"type":"system","subtype":"init","cwd":"/work","session_id":"s1","tools":["Bash",' +
    '"Read"],"model":"claude-sonnet-4-5-20250929","permissionMode":"bypassPermissions"}';
  const state = initialRuntimeState();
  t.like(claudeCodeRuntime.parseLine('stdout', init, state), {
    kind: 'agent.system.init',
    payload: { model: 'claude-sonnet-4-5-20250929' },
  });
  t.is(state.model, 'claude-sonnet-4-5-20250929');
  // Other system lines (hooks, compaction) name no model and leave it be.
  claudeCodeRuntime.parseLine('stdout', '{"type":"system","subtype":"compact_boundary","model":"x"}', state);
  t.is(state.model, 'claude-sonnet-4-5-20250929');
});

test('Codex: the configuration summary it prints first names its model', (t) => {
  t.is(
    read(codexRuntime, [
      '{"workdir":"/work","model":"gpt-5-codex","provider":"openai","approval":"never","sandbox":"danger-full-access"}',
      '{"type":"thread.started","thread_id":"t1"}',
      '{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":5}}',
    ]),
    'gpt-5-codex',
  );
  // An event of its own that carries a `model` of another meaning is not the run's model.
  t.is(read(codexRuntime, ['{"type":"item.completed","item":{"type":"agent_message","text":"hi"},"model":"x"}']), null);
});

test('a command: the model in its svc.usage lines, the latest kept, and in the usage event', (t) => {
  const state = initialRuntimeState();
  commandRuntime.parseLine('stdout', '{"type":"svc.usage","costUsd":0.01,"model":"local-llama-3"}', state);
  const event = commandRuntime.parseLine(
    'stdout',
    '{"type":"svc.usage","costUsd":0.02,"model":"local-llama-3.1"}',
    state,
  );
  t.is(state.model, 'local-llama-3.1');
  t.like(event, { kind: 'usage', payload: { costUsd: 0.02, model: 'local-llama-3.1' } });
  // A later report without one keeps the model said before.
  commandRuntime.parseLine('stdout', '{"type":"svc.usage","costUsd":0.03}', state);
  t.is(state.model, 'local-llama-3.1');
  t.is(read(commandRuntime, ['{"type":"svc.usage","costUsd":0.01}', 'model: gpt']), null);
});

test('OpenCode names no model in its JSON lines: the run keeps the one asked for', (t) => {
  t.is(
    read(openCodeRuntime, [
      '{"type":"step_start","sessionID":"ses_1","part":{"type":"step-start"}}',
      '{"type":"text","part":{"text":"Done."}}',
      '{"type":"step_finish","part":{"reason":"stop","tokens":{"input":1,"output":1},"cost":0}}',
    ]),
    null,
  );
});

test("a hostile agent's model claim is kept only as a short printable name", (t) => {
  const claim = (model: unknown) => read(commandRuntime, [JSON.stringify({ type: 'svc.usage', costUsd: 0, model })]);
  t.is(claim('  gpt-5  '), 'gpt-5');
  for (const hostile of [
    '',
    '   ',
    'x'.repeat(256),
    'gpt\n5',
    'gpt\u0000',
    'a\u202eb',
    42,
    null,
    ['gpt'],
    { name: 'gpt' },
  ])
    t.is(claim(hostile), null, JSON.stringify(hostile));
  t.is(claim('m'.repeat(255)), 'm'.repeat(255));
});
