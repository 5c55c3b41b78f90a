// An MCP server declared in a repository's environment, for real: the real Claude Code CLI under
// bubblewrap, against the scripted model server, starts the stdio server committed in the
// repository (test/support/mcp-probe.ts) with a project secret in its env, the model calls its tool
// as `mcp__probe__write_note`, the tool's answer reaches the model and its file the run's branch,
// and no configuration file shows in the run's diff. The secret's value is masked in the run's events.
// The real OpenCode CLI does the same with its own configuration (the server's tool as `probe_write_note`).
import test from 'ava';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { forgeStack } from '../support/forge-stack.ts';
import { MCP_PROBE_SCRIPT } from '../support/mcp-probe.ts';
import { ScriptedModel } from '../support/scripted-model.ts';
import { runEvents, waitForRunState, type TestStack } from '../support/stack.ts';

const CLAUDE = resolve('node_modules/.bin/claude');
const OPENCODE = resolve('node_modules/.bin/opencode');
const PREFIX = 'mcp-prefix-secret-7f3a9c: ';

const model = new ScriptedModel([]);
const agentsFile = join(mkdtempSync(join(tmpdir(), 'svc-agents-')), 'agents.yaml');
writeFileSync(
  agentsFile,
  [
    'agents:',
    '  - name: claude',
    '    runtime: claude-code',
    `    command: ["${CLAUDE}"]`,
    '    model: claude-sonnet-4-5',
    '  - name: opencode',
    '    runtime: opencode',
    `    command: ["${OPENCODE}"]`,
    '    provider: anthropic',
    '    model: claude-sonnet-4-5',
    '',
  ].join('\n'),
);
let fixture: ReturnType<typeof forgeStack>;

/** The model's turns: the MCP tool (as the agent names it) writes the note, its shell tool commits it. */
const noteScript = (tool: string, shell: string, text: string) => [
  { toolUse: { name: tool, input: { text } } },
  {
    toolUse: {
      name: shell,
      input: { command: 'git add -A && git commit -q -m "Add the note"', description: 'commit the note' },
    },
  },
  { text: 'Done.' },
];
let svc: TestStack;

test.before(async () => {
  await model.start();
  process.env.ANTHROPIC_BASE_URL = model.url;
  process.env.ANTHROPIC_API_KEY = 'sk-test-key';
  fixture = forgeStack({
    SVC_AGENTS_FILE: agentsFile,
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: 'sk-test-key',
  });
  svc = await fixture.start();
});
test.after.always(async () => {
  await fixture?.stop();
  await model.stop();
});

test.serial("Claude Code calls a tool of the environment's stdio MCP server; its work is the run's", async (t) => {
  fixture.github.createRepo('acme', 'with-mcp', {
    files: {
      '.svc/mcp-probe.mjs': MCP_PROBE_SCRIPT,
      // MCP servers only: no setup, nothing built or kept.
      '.svc/environment.yaml': [
        'mcp:',
        '  - name: probe',
        '    command: [node, .svc/mcp-probe.mjs]',
        '    env:',
        '      NOTE_PREFIX: "${secrets.NOTE_PREFIX}"',
        '',
      ].join('\n'),
    },
  });
  const project = await fixture.register('with-mcp');
  const put = await svc.request('PUT', `/projects/${project}/secrets/NOTE_PREFIX`, { body: { value: PREFIX } });
  t.is(put.status, 201, put.text);
  model.setScript(noteScript('mcp__probe__write_note', 'Bash', 'hello from mcp'));
  const answer = await svc.request('POST', '/runs', { body: { agent: 'claude', project, prompt: 'Write a note' } });
  t.is(answer.status, 201, answer.text);
  const runId = answer.body.run.id as string;
  const run = await waitForRunState(svc, runId, undefined, 180_000);
  const events = await runEvents(svc, runId);
  t.is(run.state, 'succeeded', JSON.stringify({ run, events: events.slice(-15) }));
  // The server's tool was called (Claude Code defers MCP tools behind its tool search, but runs a
  // call to one), and its answer, with the secret put in, reached the model.
  const calls = model.requests.filter((request) => request.tools.includes('Bash'));
  t.true(calls[1]?.lastMessage.includes(`note written: ${PREFIX}hello from mcp`), calls[1]?.lastMessage.slice(0, 600));
  // The note is the run's only change: no configuration file was written into the workspace.
  t.like(run, { commitsAhead: 1, filesChanged: 1 });
  const bare = join(fixture.github.root, 'acme', 'with-mcp.git');
  t.is(fixture.github.git(bare, 'show', `svc/${runId}:mcp-note.txt`), `${PREFIX}hello from mcp`);
  t.deepEqual(fixture.github.git(bare, 'diff', '--name-only', `main...svc/${runId}`).split('\n'), ['mcp-note.txt']);
  // The tool's result is in the run's events, the secret's value masked there.
  t.true(events.some((event) => event.kind === 'tool_use' && event.payload.name === 'mcp__probe__write_note'));
  t.false(JSON.stringify(events).includes(PREFIX.trim()), 'the secret is masked in the events');
  t.true(JSON.stringify(events).includes('hello from mcp'));
  t.false(
    events.some((event) => event.kind.startsWith('environment.')),
    'nothing set up for a file without a setup',
  );
});

test.serial("OpenCode calls a tool of the environment's stdio MCP server; its work is the run's", async (t) => {
  fixture.github.createRepo('acme', 'opencode-mcp', {
    files: {
      '.svc/mcp-probe.mjs': MCP_PROBE_SCRIPT,
      '.svc/environment.yaml': 'mcp:\n  - name: probe\n    command: [node, .svc/mcp-probe.mjs]\n',
    },
  });
  const project = await fixture.register('opencode-mcp');
  model.setScript(noteScript('probe_write_note', 'bash', 'hello from opencode'));
  model.requests.length = 0;
  const answer = await svc.request('POST', '/runs', { body: { agent: 'opencode', project, prompt: 'Write a note' } });
  t.is(answer.status, 201, answer.text);
  const runId = answer.body.run.id as string;
  const run = await waitForRunState(svc, runId, undefined, 180_000);
  const events = await runEvents(svc, runId);
  t.is(run.state, 'succeeded', JSON.stringify({ run, events: events.slice(-15) }));
  // OpenCode offered the server's tool to the model, called it, and its answer reached the model.
  const calls = model.requests.filter((request) => request.tools.includes('bash'));
  t.true(calls[0]?.tools.includes('probe_write_note'), JSON.stringify(calls[0]?.tools));
  t.true(calls[1]?.lastMessage.includes('note written: hello from opencode'), calls[1]?.lastMessage.slice(0, 600));
  t.like(run, { commitsAhead: 1, filesChanged: 1 });
  const bare = join(fixture.github.root, 'acme', 'opencode-mcp.git');
  t.is(fixture.github.git(bare, 'show', `svc/${runId}:mcp-note.txt`), 'hello from opencode');
  t.deepEqual(fixture.github.git(bare, 'diff', '--name-only', `main...svc/${runId}`).split('\n'), ['mcp-note.txt']);
});
