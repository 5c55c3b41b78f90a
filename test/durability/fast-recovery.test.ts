// A worker killed while it cuts a run's workspace: the activity heartbeats, so Temporal notices
// within seconds and a new worker carries the run on, well inside 30 s (not after the activity's
// 10-minute limit).
import test from 'ava';
import { Client, Connection } from '@temporalio/client';
import { projectLockFile } from '../../platform/project-lock.ts';
import { withFileLock } from '../../platform/file-lock.ts';
import { loadConfig } from '../../platform/config.ts';
import { startStack } from '../../stack/stack.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { spawnSvc, waitForActivityUnderWay, waitForOutput } from '../support/processes.ts';
import { request, testEnvironment, waitForRunState } from '../support/stack.ts';

test('a worker killed while it cuts a workspace is replaced within seconds', async (t) => {
  const github = new GitHubStandIn();
  github.createRepo('acme', 'slowcut');
  const environment = await testEnvironment({});
  const config = loadConfig(environment.env);
  const stack = await startStack({ config, api: true, worker: false, noAuth: false, log: () => {} });
  t.teardown(() => stack.stop());
  const api = {
    request: (method: string, path: string, options?: Parameters<typeof request>[4]) =>
      request(stack.api!.url, stack.token.token, method, path, options),
  };
  // Standalone workers tell their sandboxes where the API is.
  environment.env.SVC_API_URL = stack.api!.url;
  const first = spawnSvc(['worker'], environment.env);
  t.teardown(() => first.child.kill('SIGKILL'));
  await waitForOutput(first, /worker: polling/);
  const project = (await api.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/slowcut' } })).body
    .project.id;

  const connection = await Connection.connect({ address: stack.temporalAddress });
  t.teardown(() => connection.close());
  let second: ReturnType<typeof spawnSvc> | undefined;
  t.teardown(async () => {
    second?.child.kill('SIGTERM');
    await second?.exited;
  });
  // The test holds the project's lock: the workspace cut waits inside its activity, heartbeating.
  const runId = await withFileLock(projectLockFile(config.projectsRoot, 'acme', 'slowcut'), 'exclusive', async () => {
    const { body } = await api.request('POST', '/runs', { body: { agent: 'shell', project, prompt: 'echo cut' } });
    const handle = new Client({ connection }).workflow.getHandle(body.run.id);
    // One activity cuts the workspace and starts the agent (activities/start-activities.ts).
    await waitForActivityUnderWay(handle, 'prepareAndStartAgent');
    first.child.kill('SIGKILL');
    await first.exited;
    second = spawnSvc(['worker'], environment.env);
    await waitForOutput(second, /worker: polling/);
    return body.run.id as string;
  });
  const released = Date.now();
  const running = await waitForRunState(api, runId, ['running', 'succeeded'], 60_000);
  const took = Date.now() - released;
  t.true(took < 30_000, `the run went on ${took} ms after the lock was released`);
  t.truthy(running);
  t.is((await waitForRunState(api, runId, undefined, 60_000)).state, 'succeeded');
});
