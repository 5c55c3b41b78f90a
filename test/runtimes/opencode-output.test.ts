// OpenCode's `run --format json` lines, as the real CLI printed them against the scripted model
// server (trimmed), turned into run events, summed usage and provider errors.
import test from 'ava';
import { openCodeRuntime } from '../../activities/runtimes/opencode.ts';
import { initialRuntimeState } from '../../activities/runtimes/types.ts';
import { BUILTIN_AGENTS } from '../../core/agents.ts';

const STEP_FINISH =
  '{"type":"step_finish","timestamp":1795326469792,"sessionID":"ses_1","part":{"id":"prt_1",' +
  '"reason":"tool-calls","type":"step-finish","tokens":{"total":162,"input":120,' +
  '"output":30,"reasoning":0,"cache":{"write":4,"read":8}},"cost":0.0008274}}';
const TOOL_USE =
  '{"type":"tool_use","timestamp":1795326469547,"sessionID":"ses_1","part":{"type":"tool",' +
  '"tool":"bash","callID":"toolu_2","state":{"status":"completed","input":{"command":"echo hi > hello.txt",' +
  '"description":"write"},"output":"(no output)","metadata":{"output":"(no output)",' +
  '"exit":0,"truncated":false}}}}';
const ERROR =
  '{"type":"error","timestamp":1795326488122,"sessionID":"ses_2","error":{"name":"APIError",' +
  '"data":{"message":"invalid x-api-key","statusCode":401,"isRetryable":false}}}';

test('tool calls, text and per-step usage are parsed and summed', (t) => {
  const state = initialRuntimeState();
  t.like(openCodeRuntime.parseLine('stdout', TOOL_USE, state), {
    kind: 'tool_use',
    payload: { name: 'bash', input: { command: 'echo hi > hello.txt' }, exitCode: 0 },
  });
  openCodeRuntime.parseLine('stdout', STEP_FINISH, state);
  openCodeRuntime.parseLine('stdout', STEP_FINISH, state);
  t.like(openCodeRuntime.parseLine('stdout', '{"type":"text","part":{"text":"Done."}}', state), {
    kind: 'assistant',
    payload: { text: 'Done.' },
  });
  t.true(state.modelOutput);
  t.deepEqual(state.usage, {
    costUsd: 0.0016548,
    tokensInput: 240,
    tokensOutput: 60,
    tokensCacheRead: 16,
    tokensCacheWrite: 8,
  });
  t.is(state.providerError, null);
});

test('an API error is a provider error; plain and stderr lines are logs', (t) => {
  const state = initialRuntimeState();
  t.like(openCodeRuntime.parseLine('stdout', ERROR, state), {
    kind: 'agent.error',
    payload: { name: 'APIError', statusCode: 401 },
  });
  t.is(state.providerError, 'invalid x-api-key');
  t.like(openCodeRuntime.parseLine('stderr', 'INFO something', state), { kind: 'log.stderr' });
  t.like(openCodeRuntime.parseLine('stdout', 'not json', state), { kind: 'log.stdout' });
  t.false(state.modelOutput);
});

test('the launch passes the model, the endpoint override and permissions inline, and nothing in the workspace', (t) => {
  const agent = { ...BUILTIN_AGENTS.find((candidate) => candidate.name === 'opencode')!, model: 'claude-sonnet-4-5' };
  const spec = openCodeRuntime.buildLaunch(agent, {
    runId: 'run_x',
    prompt: 'do it',
    workspacePath: '/w',
    hostEnv: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:9/', ANTHROPIC_API_KEY: 'k', SECRET: 's' },
  });
  t.deepEqual(spec.argv, ['opencode', 'run', '--format', 'json', '--model', 'anthropic/claude-sonnet-4-5']);
  t.is(spec.stdin, 'do it');
  const config = JSON.parse(spec.env.OPENCODE_CONFIG_CONTENT!);
  t.is(config.provider.anthropic.options.baseURL, 'http://127.0.0.1:9/v1');
  t.is(config.permission.bash, 'allow');
  t.is(spec.env.OPENCODE_DISABLE_MODELS_FETCH, '1');
  t.is(spec.env.ANTHROPIC_API_KEY, 'k');
  t.false('SECRET' in spec.env);
});
