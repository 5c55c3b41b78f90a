// A project's repoContext reaches every agent: model-driven runtimes read it before their task,
// a command agent (whose prompt may be a script) in SVC_REPO_CONTEXT, its prompt untouched.
import test from 'ava';
import { BUILTIN_AGENTS } from '../../core/agents.ts';
import { runtimeFor } from '../../activities/runtimes/index.ts';

const builtin = (name: string) => BUILTIN_AGENTS.find((agent) => agent.name === name)!;
const context = {
  runId: 'run_x',
  prompt: 'fix the login bug',
  workspacePath: '/workspace',
  hostEnv: {},
  repoContext: 'Use pnpm, never npm.\nTests: pnpm test.\n',
};

for (const name of ['claude-code', 'codex', 'opencode']) {
  test(`${name} reads the project's context, then its task`, (t) => {
    const agent = builtin(name);
    const spec = runtimeFor(agent.runtime).buildLaunch(agent, context);
    const stdin = String(spec.stdin);
    const contextAt = stdin.indexOf('Use pnpm, never npm.\nTests: pnpm test.');
    const taskAt = stdin.indexOf('fix the login bug');
    t.true(contextAt >= 0 && taskAt > contextAt, stdin);
    t.is(spec.env.SVC_REPO_CONTEXT, context.repoContext);
  });

  test(`${name} without a context is given its task alone`, (t) => {
    const agent = builtin(name);
    const spec = runtimeFor(agent.runtime).buildLaunch(agent, { ...context, repoContext: null });
    t.is(spec.stdin, 'fix the login bug');
    t.false('SVC_REPO_CONTEXT' in spec.env);
  });
}

test("the shell agent's script stays as written; the context is in its environment", (t) => {
  const agent = builtin('shell');
  const spec = runtimeFor(agent.runtime).buildLaunch(agent, { ...context, prompt: 'make test' });
  t.is(spec.stdin, 'make test');
  t.is(spec.env.SVC_PROMPT, 'make test');
  t.is(spec.env.SVC_REPO_CONTEXT, context.repoContext);
});
