// Kill -9 the worker while a run is finalizing: the sandbox's finalizer goes on, its result waits
// in Temporal as a signal, and a new worker finishes the run: branch pushed once, exactly one PR.
import test from 'ava';
import { RunEventEntity } from '../../db/entities/index.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { spawnSvc, waitFor, waitForOutput } from '../support/processes.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { waitForRunState } from '../support/stack.ts';
import { startApiOnlyStack } from '../support/worker-kill.ts';

test('a run survives SIGKILL of its worker mid-finalize, with exactly one pull request', async (t) => {
  const github = new GitHubStandIn();
  github.createRepo('acme', 'finalize-kill');
  const forge = new PullRequestsStandIn();
  await forge.start();
  t.teardown(() => forge.stop());
  // The finalizer is slowed down by a pre-push hook, so the kill lands while finalize is under way.
  const { environment, stack, api } = await startApiOnlyStack(t, {
    SVC_GIT_TOKEN: 'ghp_test',
    SVC_GITHUB_API_URL: forge.url,
    SVC_PR_POLL_MIN_MS: '300000',
  });
  const workerEnv = { ...environment.env, SVC_API_URL: stack.api!.url };

  const first = spawnSvc(['worker'], workerEnv);
  t.teardown(() => first.child.kill('SIGKILL'));
  await waitForOutput(first, /worker: polling/);
  const project = (
    await api.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/finalize-kill' } })
  ).body.project.id;
  const { body } = await api.request('POST', '/runs', {
    body: {
      agent: 'shell',
      project,
      prompt:
        'mkdir -p .git/hooks && printf "#!/bin/sh\\nsleep 3\\n" > .git/hooks/pre-push && chmod +x ' +
        '.git/hooks/pre-push\necho work > work.txt\ngit add work.txt\ngit commit -qm work',
    },
  });
  const runId = body.run.id as string;
  await waitFor(
    async () => (await stack.readModel.em().count(RunEventEntity, { runId, kind: 'finalize.intent_parked' })) > 0,
    'finalize to start',
    60_000,
  );
  first.child.kill('SIGKILL');
  await first.exited;

  const second = spawnSvc(['worker'], workerEnv);
  t.teardown(async () => {
    second.child.kill('SIGTERM');
    await second.exited;
  });
  const run = await waitForRunState(api, runId, undefined, 120_000);
  t.like(run, { state: 'succeeded', commitsAhead: 1, prState: 'open' });
  t.is(forge.pulls.length, 1, 'exactly one pull request');
  t.is(forge.requests.filter((r) => r.method === 'POST').length, 1, 'created once');
  const kinds = (await stack.readModel.em().find(RunEventEntity, { runId }, { orderBy: { seq: 'asc' } })).map(
    (event) => event.kind,
  );
  t.is(kinds.filter((kind) => kind === 'reap.pr_opened').length, 1);
  t.is(kinds.filter((kind) => kind === 'finalize.result').length, 1);
});
