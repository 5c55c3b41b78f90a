// The ACP runtime's lines as svc takes them: each rebuilt from the fields it may carry, bounded, as
// the agent can write these lines itself; a deep or huge line stores as a bounded event.
import test from 'ava';
import { withoutNul, TOO_DEEP } from '../../db/nul.ts';
import { acpRuntime } from '../../activities/runtimes/acp.ts';
import { initialRuntimeState } from '../../activities/runtimes/types.ts';

const parse = (line: unknown, state = initialRuntimeState()) =>
  acpRuntime.parseLine('stdout', JSON.stringify(line), state);

test('a line carries only its fields, bounded; anything else is dropped', (t) => {
  const event = parse({ acp: 'tool_call', id: 't1', title: 'x'.repeat(5000), status: 'completed', evil: { deep: 1 } });
  t.is(event.kind, 'agent.tool_call');
  t.deepEqual(Object.keys(event.payload as object), ['id', 'kind', 'title', 'status', 'locations', 'update']);
  t.is((event.payload as { title: string }).title.length, 501);
  // A deep agent name is two short strings.
  let deep: unknown = 'bottom';
  for (let i = 0; i < 3500; i++) deep = { nested: deep };
  t.deepEqual(parse({ acp: 'session', agent: { name: deep, version: '1' } }).payload, {
    agent: { name: null, version: '1' },
  });
  t.is(parse({ acp: 'unknown-kind', text: 'x' }).kind, 'log.stdout');
  t.is(parse({ acp: '__proto__' }).kind, 'log.stdout');
});

test('usage: only a finite dollar cost counts, and it never goes down', (t) => {
  const state = initialRuntimeState();
  parse({ acp: 'usage', used: 10, size: 100, cost: { amount: 0.5, currency: 'USD' } }, state);
  t.is(state.usage?.costUsd, 0.5);
  const forged = parse({ acp: 'usage', used: 1e400, cost: { amount: 1e400, currency: 'USD' } }, state);
  t.deepEqual(forged.payload, { costUsd: 0.5, contextTokens: null, contextSize: null });
  parse({ acp: 'usage', cost: { amount: 0.1, currency: 'USD' } }, state);
  parse({ acp: 'usage', cost: { amount: 9, currency: 'EUR' } }, state);
  t.is(state.usage?.costUsd, 0.5);
});

test('a stored value nests at most so deep, whatever a runtime passed on', (t) => {
  let deep: unknown = 'bottom';
  for (let i = 0; i < 5000; i++) deep = [deep];
  let cut = withoutNul({ payload: deep }) as unknown;
  let depth = 0;
  while (Array.isArray(cut) || (cut && typeof cut === 'object')) {
    cut = Array.isArray(cut) ? cut[0] : Object.values(cut as object)[0];
    depth++;
  }
  t.is(cut, TOO_DEEP);
  t.is(depth, 64);
});

test("the first turn is the agent's system prompt, the project's context, then the task", (t) => {
  const agent = {
    name: 'a',
    description: null,
    runtime: 'acp' as const,
    command: ['my-agent', '--acp'],
    env: {},
    provider: null,
    model: null,
    systemPrompt: 'Be brief.',
    maxCostUsd: null,
    maxDurationMinutes: null,
    steering: null,
    source: 'config' as const,
  };
  const launch = acpRuntime.buildLaunch(agent, {
    runId: 'run_x',
    prompt: 'Fix it',
    workspacePath: '/workspace',
    hostEnv: {},
    repoContext: 'A Go service.',
  });
  t.is(
    launch.stdin,
    'Context about this repository, from its settings:\n\nA Go service.\n\nYour task:\n\nBe brief.\n\nFix it',
  );
  t.deepEqual(launch.argv, ['my-agent', '--acp']);
  t.is(launch.protocol, 'acp');
  t.is(launch.env.SVC_ACP_STEERING, '1');
});
