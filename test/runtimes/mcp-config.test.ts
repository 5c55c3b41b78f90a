// Each runtime's rendering of the environment's MCP servers, read back by the real CLI where it can
// say what it made of them: Codex's `-c mcp_servers.…` overrides (`codex mcp list --json`) and
// OpenCode's inline `mcp` key (`opencode debug config`); Claude Code's inline `--mcp-config` with
// its tools allowed. No env or header value (a secret's, say) is in argv; values with quotes,
// backslashes and non-ASCII survive; nothing is written to the workspace, and a launch without
// servers is as it was. Codex, launched as svc launches it against the scripted model server,
// calls the stdio server's tool (Claude Code does in test/runs/environment-mcp.test.ts).
import test from 'ava';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { runtimeFor } from '../../activities/runtimes/index.ts';
import type { LaunchContext } from '../../activities/runtimes/types.ts';
import { BUILTIN_AGENTS, type AgentDefinition } from '../../core/agents.ts';
import type { McpServer } from '../../core/mcp-servers.ts';
import { initialRuntimeState } from '../../activities/runtimes/types.ts';
import { MCP_PROBE_SCRIPT } from '../support/mcp-probe.ts';
import { ScriptedModel } from '../support/scripted-model.ts';

const run = promisify(execFile);
const TRICKY = 'Bearer a"b\\c $HOME ${x} é ✓';
const SERVERS: McpServer[] = [
  { name: 'probe', command: ['node', 'tools/mcp server.js', '--flag="x"'], env: { NOTE_PREFIX: TRICKY } },
  { name: 'issue-tracker', url: 'https://mcp.example.com:8443/mcp?x=1', headers: { Authorization: TRICKY } },
];
const agent = (name: string): AgentDefinition => BUILTIN_AGENTS.find((candidate) => candidate.name === name)!;

function launch(name: string, mcpServers?: McpServer[]) {
  const workspacePath = mkdtempSync(join(tmpdir(), 'svc-mcp-workspace-'));
  const context: LaunchContext = {
    runId: 'run_mcp',
    prompt: 'p',
    workspacePath,
    hostEnv: { PATH: process.env.PATH },
    ...(mcpServers ? { mcpServers } : {}),
  };
  const spec = runtimeFor(agent(name).runtime).buildLaunch(agent(name), context);
  return { spec, workspacePath };
}

test('Claude Code: an inline --mcp-config, last, and every tool of each server allowed', (t) => {
  const { spec, workspacePath } = launch('claude-code', SERVERS);
  const at = spec.argv.indexOf('--mcp-config');
  t.true(at > 0);
  t.deepEqual(JSON.parse(spec.argv[at + 1]!), {
    mcpServers: {
      probe: {
        type: 'stdio',
        command: 'node',
        args: ['tools/mcp server.js', '--flag="x"'],
        env: { NOTE_PREFIX: '${SVC_MCP_0_0}' },
      },
      'issue-tracker': {
        type: 'http',
        url: 'https://mcp.example.com:8443/mcp?x=1',
        headers: { Authorization: '${SVC_MCP_1_0}' },
      },
    },
  });
  // The values are in its environment, which Claude Code expands them from.
  t.like(spec.env, { SVC_MCP_0_0: TRICKY, SVC_MCP_1_0: TRICKY });
  t.false(
    spec.argv.some((arg) => arg.includes('a"b')),
    'no value in argv',
  );
  // Both flags take every argument after them: nothing else follows.
  t.deepEqual(spec.argv.slice(at + 2), ['--allowedTools', 'mcp__probe', 'mcp__issue-tracker']);
  t.deepEqual(readdirSync(workspacePath), [], 'nothing written to the workspace');
  t.false(launch('claude-code').spec.argv.includes('--mcp-config'));
  t.false(launch('claude-code', []).spec.argv.includes('--allowedTools'));
});

test('Codex: -c overrides before the prompt, read back by the real CLI as they were meant', async (t) => {
  const { spec, workspacePath } = launch('codex', SERVERS);
  t.is(spec.argv.at(-1), '-', 'the prompt on stdin stays last');
  const overrides = spec.argv.flatMap((arg, index) =>
    spec.argv[index - 1] === '-c' && arg.startsWith('mcp_servers.') ? ['-c', arg] : [],
  );
  t.is(overrides.length, 2 * 5);
  t.false(
    spec.argv.some((arg) => arg.includes('a"b')),
    'no value in argv',
  );
  t.like(spec.env, { SVC_MCP_0_0: TRICKY, SVC_MCP_1_0: TRICKY });
  const home = mkdtempSync(join(tmpdir(), 'svc-codex-home-'));
  const { stdout } = await run(resolve('node_modules/.bin/codex'), [...overrides, 'mcp', 'list', '--json'], {
    env: { PATH: process.env.PATH, HOME: home, CODEX_HOME: home },
  });
  const listed = Object.fromEntries(
    (JSON.parse(stdout) as { name: string; transport: Record<string, unknown> }[]).map((server) => [
      server.name,
      server.transport,
    ]),
  );
  // A command with env: `sh` sets it from the variables Codex passes on, then runs the command.
  t.like(listed.probe, { type: 'stdio', command: 'sh', env_vars: ['SVC_MCP_0_0'] });
  const args = listed.probe!.args as string[];
  t.deepEqual(args.slice(2), ['sh', 'node', 'tools/mcp server.js', '--flag="x"']);
  const started = await run(
    'sh',
    [args[0]!, args[1]!, 'sh', 'sh', '-c', 'printf %s "$NOTE_PREFIX"; printf " %s" "$@"', 'x', 'a b'],
    {
      env: { PATH: process.env.PATH, SVC_MCP_0_0: TRICKY },
    },
  );
  t.is(started.stdout, `${TRICKY} a b`, 'the command runs with its env and its own arguments');
  t.like(listed['issue-tracker'], {
    type: 'streamable_http',
    url: 'https://mcp.example.com:8443/mcp?x=1',
    http_headers: null,
    env_http_headers: { Authorization: 'SVC_MCP_1_0' },
  });
  // A server without env or headers: its command as it is.
  const plain = launch('codex', [{ name: 'plain', command: ['node', 'x.js'] }]).spec.argv;
  t.true(plain.includes('mcp_servers.plain.command="node"') && plain.includes('mcp_servers.plain.args=["x.js"]'));
  t.deepEqual(readdirSync(workspacePath), []);
  t.false(launch('codex').spec.argv.some((arg) => arg.startsWith('mcp_servers.')));
});

test("OpenCode: the inline configuration's mcp key, accepted by the real CLI", async (t) => {
  const { spec, workspacePath } = launch('opencode', SERVERS);
  const config = JSON.parse(spec.env.OPENCODE_CONFIG_CONTENT!);
  t.deepEqual(config.mcp, {
    probe: {
      type: 'local',
      command: ['node', 'tools/mcp server.js', '--flag="x"'],
      environment: { NOTE_PREFIX: TRICKY },
      enabled: true,
    },
    'issue-tracker': {
      type: 'remote',
      url: 'https://mcp.example.com:8443/mcp?x=1',
      headers: { Authorization: TRICKY },
      enabled: true,
    },
  });
  t.like(config.permission, { bash: 'allow' }, 'the rest of its configuration stays');
  const home = mkdtempSync(join(tmpdir(), 'svc-opencode-home-'));
  const { stdout } = await run(resolve('node_modules/.bin/opencode'), ['debug', 'config'], {
    cwd: home,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      OPENCODE_CONFIG_CONTENT: spec.env.OPENCODE_CONFIG_CONTENT,
      OPENCODE_DISABLE_MODELS_FETCH: '1',
      OPENCODE_DISABLE_AUTOUPDATE: '1',
    },
  });
  // It prints header values masked: the rest is as written.
  t.like(JSON.parse(stdout).mcp, {
    probe: config.mcp.probe,
    'issue-tracker': { type: 'remote', url: SERVERS[1]!.url },
  });
  t.deepEqual(readdirSync(workspacePath), []);
  t.false('mcp' in JSON.parse(launch('opencode').spec.env.OPENCODE_CONFIG_CONTENT!));
});

test('Codex as launched calls the stdio server, which gets its env through sh', async (t) => {
  const model = new ScriptedModel([
    { toolUse: { name: 'mcp__probe__write_note', input: { text: 'from codex' } } },
    { text: 'Done.' },
  ]);
  await model.start();
  t.teardown(() => model.stop());
  const workspacePath = mkdtempSync(join(tmpdir(), 'svc-mcp-workspace-'));
  const home = mkdtempSync(join(tmpdir(), 'svc-codex-home-'));
  writeFileSync(join(workspacePath, 'probe.mjs'), MCP_PROBE_SCRIPT);
  const codex = { ...agent('codex'), command: [resolve('node_modules/.bin/codex')], model: 'gpt-5' };
  const spec = runtimeFor('codex').buildLaunch(codex, {
    runId: 'run_mcp',
    prompt: 'Write a note',
    workspacePath,
    hostEnv: { PATH: process.env.PATH, HOME: home, OPENAI_BASE_URL: `${model.url}/v1`, OPENAI_API_KEY: 'sk-test' },
    mcpServers: [{ name: 'probe', command: ['node', 'probe.mjs'], env: { NOTE_PREFIX: TRICKY } }],
  });
  const child = spawn(spec.argv[0]!, spec.argv.slice(1), {
    cwd: workspacePath,
    env: { ...spec.env, CODEX_HOME: home },
  });
  child.stdin.end(spec.stdin);
  let stdout = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  t.is(await new Promise((done) => child.on('exit', done)), 0);
  t.is(readFileSync(join(workspacePath, 'mcp-note.txt'), 'utf8'), `${TRICKY}from codex\n`);
  t.true(model.requests.at(-1)!.lastMessage.includes('note written: '), model.requests.at(-1)!.lastMessage);
  const state = initialRuntimeState();
  const events = stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => runtimeFor('codex').parseLine('stdout', line, state));
  t.true(
    events.some(
      (event) =>
        event.kind === 'tool_use' &&
        (event.payload as { name: string; status: string }).name === 'mcp__probe__write_note' &&
        (event.payload as { status: string }).status === 'completed',
    ),
    stdout,
  );
});
