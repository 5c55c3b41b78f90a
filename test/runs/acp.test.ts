// The `acp` runtime end to end: svc's ACP client drives a scripted agent built on the protocol's
// real SDK (test/support/acp-agent.ts) under bubblewrap. The agent's plan, tool calls, file edits,
// permission requests (its workspace allowed, /etc/hosts refused), messages and cost become the
// run's structured events and figures; the environment's MCP servers reach its session; a steering
// message is its next turn, and an urgent one cancels the turn under way first.
import test from 'ava';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { MCP_PROBE_SCRIPT } from '../support/mcp-probe.ts';
import { forgeStack } from '../support/forge-stack.ts';
import { waitFor } from '../support/processes.ts';
import { runEvents, waitForRunState, type TestStack } from '../support/stack.ts';

const agentsFile = join(mkdtempSync(join(tmpdir(), 'svc-agents-')), 'agents.yaml');
writeFileSync(
  agentsFile,
  [
    'agents:',
    '  - name: acp-probe',
    '    runtime: acp',
    `    command: ["${process.execPath}", "--no-warnings", "${resolve('test/support/acp-agent.ts')}"]`,
    '    steering: mid-run',
    '',
  ].join('\n'),
);
let fixture: ReturnType<typeof forgeStack>;
let svc: TestStack;

test.before(async () => {
  // The agent's script is read from test/support in the sandbox; its SDK from svc's node_modules.
  fixture = forgeStack({ SVC_AGENTS_FILE: agentsFile, SVC_SANDBOX_TOOLCHAIN: resolve('test/support') });
  svc = await fixture.start();
});
test.after.always(() => fixture?.stop());

const dispatch = async (project: string, prompt: string) => {
  const answer = await svc.request('POST', '/runs', { body: { agent: 'acp-probe', project, prompt } });
  if (answer.status !== 201) throw new Error(answer.text);
  return answer.body.run.id as string;
};
const payloads = (events: { kind: string; payload: any }[], kind: string) =>
  events.filter((event) => event.kind === kind).map((event) => event.payload);

test.serial("an ACP agent's plan, tool calls, edits, permissions, message and cost are the run's", async (t) => {
  fixture.github.createRepo('acme', 'acp-work', {
    files: {
      '.svc/mcp-probe.mjs': MCP_PROBE_SCRIPT,
      '.svc/environment.yaml': 'mcp:\n  - name: probe\n    command: [node, .svc/mcp-probe.mjs]\n',
    },
  });
  const runId = await dispatch(await fixture.register('acp-work'), 'Write the note');
  const run = await waitForRunState(svc, runId, undefined, 120_000);
  const events = await runEvents(svc, runId);
  t.is(run.state, 'succeeded', JSON.stringify({ run, events: events.slice(-12) }));
  t.like(run, { commitsAhead: 1, filesChanged: 1, costUsd: 0.0123, costBasis: 'api' });
  const bare = join(fixture.github.root, 'acme', 'acp-work.git');
  t.is(fixture.github.git(bare, 'show', `svc/${runId}:note.txt`), 'hello\nworld');

  t.deepEqual(payloads(events, 'agent.plan')[0]?.entries, [
    { content: 'Write the note', status: 'in_progress', priority: 'high' },
    { content: 'Say what was done', status: 'pending', priority: 'medium' },
  ]);
  const calls = payloads(events, 'agent.tool_call');
  t.like(calls[0], { id: 'write-note', kind: 'edit', title: 'Write note.txt', status: 'pending' });
  t.like(calls.at(-1), { id: 'write-note', status: 'completed', update: true });
  t.deepEqual(payloads(events, 'agent.file_edit'), [{ path: 'note.txt', added: 2, removed: 0, created: true }]);
  t.deepEqual(
    payloads(events, 'agent.permission').map((entry) => [entry.title, entry.decision]),
    [
      ['Write note.txt', 'allowed'],
      ['Edit /etc/hosts', 'refused'],
    ],
  );
  // The chunks as one message; the agent saw the refusal and the environment's server.
  t.deepEqual(payloads(events, 'agent.message'), [{ text: 'Wrote note.txt; /etc/hosts refused; servers: probe.' }]);
  t.like(payloads(events, 'agent.turn_ended').at(-1), { stopReason: 'end_turn' });
});

for (const priority of ['normal', 'urgent'] as const)
  test.serial(`a ${priority} steering message is the ACP agent's next turn`, async (t) => {
    const repo = `acp-steer-${priority}`;
    fixture.github.createRepo('acme', repo);
    const runId = await dispatch(await fixture.register(repo), `Write the note, then wait-for-steer ${priority}`);
    // Once the agent is in its turn (its note is written), the message comes in.
    await waitFor(
      async () => (await runEvents(svc, runId)).some((event) => event.kind === 'agent.message') || undefined,
      'the first turn under way',
      120_000,
    );
    const steered = await svc.request('POST', `/runs/${runId}/steer`, {
      body: { body: `also write steer.txt (${priority})`, priority },
    });
    t.is(steered.status, 200, steered.text);
    const run = await waitForRunState(svc, runId, undefined, 120_000);
    const events = await runEvents(svc, runId);
    t.is(run.state, 'succeeded', JSON.stringify({ run, events: events.slice(-12) }));
    const bare = join(fixture.github.root, 'acme', `${repo}.git`);
    t.regex(
      fixture.github.git(bare, 'show', `svc/${runId}:steer.txt`),
      new RegExp(`also write steer.txt \\(${priority}\\)`),
    );
    t.like(payloads(events, 'agent.steer_taken')[0], { priority });
    const stops = payloads(events, 'agent.turn_ended').map((entry) => entry.stopReason);
    // A queued message waits for the turn's end; an urgent one cancels it.
    t.deepEqual(stops, priority === 'urgent' ? ['cancelled', 'end_turn'] : ['end_turn', 'end_turn']);
    t.true(events.some((event) => event.kind === 'steer.delivered'));
  });
