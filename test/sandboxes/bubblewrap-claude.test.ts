// The real Claude Code CLI on the worker's host (test/support/claude-run.ts): steered mid-run,
// commits, PR, cost, tokens; the same scenario as in a container and in a pod. Under bubblewrap,
// and as a plain process (the operator's opt-in), where the relay runs from svc's checkout.
import test from 'ava';
import { resolve } from 'node:path';
import { claudeCommitsAndOpensPr } from '../support/claude-run.ts';

// The host's install, found through the sandbox's toolchain like any operator agent.
const CLAUDE = resolve('node_modules/.bin/claude');

test.serial(
  'Claude Code under bubblewrap is steered while it works; svc pushes, opens the PR, records cost',
  async (t) => {
    const run = await claudeCommitsAndOpensPr(t, {}, 'claude-bubblewrapped', CLAUDE);
    t.regex(run.sandboxRunId, /^local:/);
  },
);

test.serial('Claude Code as a plain process is steered the same way', async (t) => {
  const env = { SVC_SANDBOX: 'process', SVC_ALLOW_UNSANDBOXED: '1' };
  const run = await claudeCommitsAndOpensPr(t, env, 'claude-unsandboxed', CLAUDE);
  t.regex(run.sandboxRunId, /^local:/);
});
