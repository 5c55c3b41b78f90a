// A project secret is masked as the agent was given it: removed or changed while the agent runs,
// and a new worker taking the run over (reading the project's secrets anew), the values the agent
// holds are still masked in every line it prints. The production topology's halves: an API stack
// here, `svc worker` processes beside it.
import test from 'ava';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { spawnSvc, waitForOutput } from '../support/processes.ts';
import { waitForRunState } from '../support/stack.ts';
import { replaceWorker, startApiOnlyStack } from '../support/worker-kill.ts';

const github = new GitHubStandIn();
github.createRepo('acme', 'rotating', { files: { 'README.md': 'rotating\n' } });
const forge = new PullRequestsStandIn();
test.before(() => forge.start());
test.after.always(() => forge.stop());

test('a secret removed or rotated mid-run stays masked as launched, across a new worker', async (t) => {
  const { environment, stack, api } = await startApiOnlyStack(t, {
    SVC_GIT_TOKEN: 'ghp_test',
    SVC_GITHUB_API_URL: forge.url,
  });
  environment.env.SVC_API_URL = stack.api!.url;
  const worker = spawnSvc(['worker'], environment.env);
  t.teardown(() => worker.child.kill('SIGKILL'));
  await waitForOutput(worker, /worker: polling/);

  const registered = await api.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/rotating' } });
  t.is(registered.status, 201, registered.text);
  const project = registered.body.project.id as string;
  const put = (name: string, value: string) =>
    api.request('PUT', `/projects/${project}/secrets/${name}`, { body: { value, scope: 'run' } });
  t.is((await put('DEPLOY_TOKEN', 'launched-deploy-4f8a2c9e71')).status, 201);
  t.is((await put('API_KEY', 'launched-api-b3d6e0a915')).status, 201);

  const prompt = 'echo started; until [ -e go ]; do sleep 0.2; done; rm go; echo "deploy=$DEPLOY_TOKEN api=$API_KEY"';
  const dispatched = await api.request('POST', '/runs', { body: { agent: 'shell', project, prompt } });
  t.is(dispatched.status, 201, dispatched.text);
  const runId = dispatched.body.run.id as string;
  await waitForRunState(api, runId, ['running']);

  t.is((await api.request('DELETE', `/projects/${project}/secrets/DEPLOY_TOKEN`)).status, 204);
  t.is((await put('API_KEY', 'rotated-api-77c0e4d2a8')).status, 200);
  // The run's supervision starts anew in another worker, which reads the project's secrets now.
  await replaceWorker(t, worker, environment.env);
  writeFileSync(join(environment.dataDir, 'workspaces', runId, 'go'), '');
  const run = await waitForRunState(api, runId, undefined, 90_000);
  t.is(run.state, 'succeeded', JSON.stringify(run));

  // What was stored, read from the read model itself: the API masks the values it was given on
  // top, in its own process, which says nothing of what the worker wrote.
  const rows = JSON.stringify(
    await stack.readModel.em().getConnection().execute('select * from run_events where run_id = ?', [runId]),
  );
  t.true(rows.includes('deploy='), 'the agent printed its secrets');
  t.false(rows.includes('launched-deploy-4f8a2c9e71'), 'a removed secret is masked');
  t.false(rows.includes('launched-api-b3d6e0a915'), "a rotated secret's launched value is masked");
});
