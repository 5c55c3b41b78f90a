// The real Claude Code CLI in a pod (test/support/claude-run.ts): steered mid-run, commits, PR, cost, tokens; the
// model server on the worker's loopback reached from the pod through the run's gateway.
import test from 'ava';
import { claudeCommitsAndOpensPr } from '../support/claude-run.ts';
import { startKubeCluster } from '../support/kube-node.ts';
import { waitFor } from '../support/processes.ts';

test('Claude Code in a pod is steered while it works; svc pushes, opens the PR, records cost', async (t) => {
  const { kube, env } = await startKubeCluster(t);
  const run = await claudeCommitsAndOpensPr(t, env, 'claude-podded');
  t.regex(run.sandboxRunId, /^pod:svc-runs\/svc-run-/);
  // Both pods (agent and finalizer) are deleted once their output is copied.
  await waitFor(async () => kube.pods.size === 0, 'pods deleted', 20_000);
  t.is(kube.created.length, 2);
});
