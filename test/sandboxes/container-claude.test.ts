// The real Claude Code CLI in a container (test/support/claude-run.ts): steered mid-run, commits, PR, cost, tokens.
import test from 'ava';
import { startContainerEngine, waitUntilRemoved } from '../support/container-engine.ts';
import { claudeCommitsAndOpensPr } from '../support/claude-run.ts';

test('Claude Code in a container is steered while it works; svc pushes, opens the PR, records cost', async (t) => {
  const engine = await startContainerEngine();
  t.teardown(() => engine.stop());
  const run = await claudeCommitsAndOpensPr(t, engine.env, 'claude-boxed');
  t.regex(run.sandboxRunId, /^container:/);
  // The finalizer's container ends after it posted its result: gone before the engine is.
  for (const name of [`svc-${run.id}`, `svc-${run.id}-finalize`]) await waitUntilRemoved(engine.engine, name, 20_000);
});
