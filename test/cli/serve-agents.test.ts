// The built-in agents from `scripts/svc serve` as a newcomer starts it: the real script (its
// install check, then `svc serve`), a private data directory, a PATH with nothing of svc's
// node_modules on it, and only the model settings a user gives (API keys, base URLs, an egress
// entry that repeats the model's own). Claude Code, Codex and OpenCode each answer from a local
// scripted model server, inside the default sandbox, with the CLIs of svc's own install.
import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { freePort } from '../support/free-port.ts';
import { drainedExit, waitForOutput, type ChildHandle } from '../support/processes.ts';
import { ScriptedModel } from '../support/scripted-model.ts';
import { request, runEvents, waitForRunState } from '../support/stack.ts';

const ANSWER = 'Hello from the scripted model, through svc.';

/** The environment a user's shell would give: PATH without any node_modules/.bin, no svc settings. */
function userEnv(overrides: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env))
    if (!/^(SVC_|TEMPORAL_|DATABASE_URL|ANTHROPIC_|OPENAI_|CLAUDE_|npm_)/.test(name)) env[name] = value;
  env.PATH = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((entry) => !/node_modules[\\/]\.bin\/?$/.test(entry))
    .join(delimiter);
  return { ...env, ...overrides };
}

function startServe(env: NodeJS.ProcessEnv): ChildHandle {
  const child = spawn('bash', [resolve('scripts/svc'), 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  return { child, output: () => output, exited: drainedExit(child) };
}

test.serial('claude-code, codex and opencode run out of the box from scripts/svc serve', async (t) => {
  const model = new ScriptedModel([{ text: ANSWER }]);
  await model.start();
  t.teardown(() => model.stop());
  const modelPort = new URL(model.url).port;
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-serve-agents-'));
  const env = userEnv({
    SVC_DATA_DIR: dataDir,
    SVC_PORT: '0',
    SVC_TEMPORAL_PORT: String(await freePort()),
    SVC_TEMPORAL_UI_PORT: String(await freePort()),
    ANTHROPIC_BASE_URL: model.url,
    ANTHROPIC_API_KEY: 'sk-ant-test',
    OPENAI_BASE_URL: `${model.url}/v1`,
    OPENAI_API_KEY: 'sk-test',
    // The same address the model endpoints open already: merged, not opened twice.
    SVC_SANDBOX_EGRESS: `127.0.0.1:${modelPort}`,
  });
  t.false(
    (env.PATH ?? '').split(delimiter).some((entry) => entry.includes(`node_modules${'/'}.bin`)),
    'the CLIs are not on the PATH serve is given',
  );
  const serve = startServe(env);
  t.teardown(async () => {
    serve.child.kill('SIGTERM');
    await serve.exited;
  });
  await waitForOutput(serve, /svc is up/, 240_000);
  const apiUrl = (await waitForOutput(serve, /API: +(http:\/\/\S+)/))[1]!;
  const token = readFileSync(join(dataDir, 'operator-token'), 'utf8').trim();
  const api = {
    request: (method: string, path: string, options?: any) => request(apiUrl, token, method, path, options),
  };

  const runs = await Promise.all(
    [
      { agent: 'claude-code', modelOverride: 'claude-sonnet-4-5' },
      { agent: 'codex', modelOverride: 'gpt-test' },
      { agent: 'opencode', modelOverride: 'claude-sonnet-4-5' },
    ].map(async (body) => {
      const dispatched = await api.request('POST', '/runs', { body: { ...body, prompt: 'Say hello.' } });
      t.is(dispatched.status, 201, dispatched.text);
      return { agent: body.agent, id: dispatched.body.run.id as string };
    }),
  );
  for (const { agent, id } of runs) {
    const run = await waitForRunState(api, id, undefined, 240_000);
    const events = await runEvents(api, id);
    const trail = JSON.stringify(events.map((event) => [event.kind, event.payload]));
    t.is(run.state, 'succeeded', `${agent}: ${JSON.stringify(run)} ${trail.slice(-3000)}`);
    t.true(trail.includes(ANSWER), `${agent} shows the model's answer: ${trail.slice(-3000)}`);
    const started = events.find((event) => event.kind === 'sandbox.started');
    t.is(started?.payload.isolation, 'bubblewrap', `${agent}: ${JSON.stringify(started)}`);
    t.true(
      (started?.payload.toolchain as string[]).some((dir) => dir.endsWith(`${'/'}node_modules`)),
      `${agent}'s CLI came from svc's install: ${JSON.stringify(started?.payload)}`,
    );
  }
  t.true(model.requests.some((seen) => seen.path.startsWith('/v1/messages')));
  t.true(model.requests.some((seen) => seen.path === '/v1/responses'));
});
