// Retention of kept repository environments, for real: a pass unmounts an ended run's workspace and
// home over a kept environment before it removes them (the kept tree is untouched), removes a kept
// environment unused past SVC_RETENTION_ENVIRONMENTS, and keeps one a live run mounts.
import test from 'ava';
import { existsSync, readFileSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { isMounted } from '../../activities/environment-cache.ts';
import { retentionScheduleId } from '../../worker/retention-schedule.ts';
import { suiteTemporalAddress } from '../support/env.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { waitFor } from '../support/processes.ts';
import { runEvents, runStdout, startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

const github = new GitHubStandIn();
const forge = new PullRequestsStandIn();
let svc: TestStack;

test.before(async () => {
  await forge.start();
  svc = await startTestStack({
    env: {
      SVC_GIT_TOKEN: 'ghp_test',
      SVC_GITHUB_API_URL: forge.url,
      SVC_RETENTION_SANDBOXES: '1s',
      SVC_RETENTION_WORKSPACES: '1s',
      SVC_RETENTION_ENVIRONMENTS: '1h',
    },
  });
});
test.after.always(async () => {
  await svc?.stop();
  await forge.stop();
});

async function retentionPass(): Promise<any> {
  const connection = await Connection.connect({ address: suiteTemporalAddress() });
  try {
    const key = readFileSync(join(svc.config.dataDir, 'data-dir-key'), 'utf8').trim();
    const asked = Date.now();
    await new Client({ connection }).schedule.getHandle(retentionScheduleId(svc.config.taskQueue, key)).trigger();
    let pass: any;
    await waitFor(
      async () => {
        const { body } = await svc.request('GET', '/ops/overview');
        pass = body.retention.find((each: any) => Date.parse(each.finishedAt) >= asked);
        return pass !== undefined;
      },
      'a retention pass reported after the trigger',
      60_000,
    );
    return pass;
  } finally {
    await connection.close();
  }
}

const SETUP =
  'setup: |\n  mkdir -p node_modules/left-pad\n  echo "module.exports = 1" > node_modules/left-pad/index.js\n';

async function projectWithEnvironment(name: string) {
  github.createRepo('acme', name, {
    files: {
      '.gitignore': 'node_modules/\n',
      'package-lock.json': `{"name": "${name}"}\n`,
      '.svc/environment.yaml': SETUP,
    },
  });
  return (await svc.request('POST', '/projects', { body: { gitUrl: `https://github.com/acme/${name}` } })).body.project
    .id as string;
}
const dispatch = async (project: string, prompt: string) =>
  (await svc.request('POST', '/runs', { body: { agent: 'shell', project, prompt } })).body.run.id as string;
const keyOf = async (runId: string) =>
  (await runEvents(svc, runId)).find((event) => event.kind === 'environment.ready')?.payload.key as string;
const aged = (path: string) =>
  utimesSync(path, new Date(Date.now() - 2 * 3600_000), new Date(Date.now() - 2 * 3600_000));

test.serial('a pass unmounts before it removes, drops an unused kept environment, keeps a mounted one', async (t) => {
  const dataDir = svc.config.dataDir;
  const live = await projectWithEnvironment('live-env');
  const idle = await projectWithEnvironment('idle-env');
  const ended = await dispatch(live, 'cat node_modules/left-pad/index.js');
  t.is((await waitForRunState(svc, ended, ['succeeded', 'failed'], 180_000)).state, 'succeeded');
  const idleRun = await dispatch(idle, 'true');
  await waitForRunState(svc, idleRun, ['succeeded', 'failed'], 180_000);
  const running = await dispatch(live, 'echo started; sleep 120');
  await waitFor(
    async () => ((await runStdout(svc, running)).includes('started') ? true : undefined),
    'the run',
    60_000,
  );

  const liveEntry = join(dataDir, 'environments', live, await keyOf(ended));
  const idleEntry = join(dataDir, 'environments', idle, await keyOf(idleRun));
  const endedWorkspace = join(dataDir, 'workspaces', ended);
  t.true(isMounted(endedWorkspace), "the ended run's workspace is still its merged view");
  aged(join(liveEntry, 'last-used'));
  aged(join(idleEntry, 'last-used'));
  await new Promise((resolve) => setTimeout(resolve, 1100)); // past the 1 s retentions

  const pass = await retentionPass();
  t.false(existsSync(endedWorkspace), "the ended run's workspace is removed");
  t.false(isMounted(endedWorkspace), '… unmounted first');
  t.false(existsSync(join(dataDir, 'overlays', ended)), '… with its own layers');
  t.is(
    readFileSync(join(liveEntry, 'workspace', 'node_modules', 'left-pad', 'index.js'), 'utf8'),
    'module.exports = 1\n',
    'nothing was removed through the mount',
  );
  t.true(existsSync(liveEntry), 'an entry a live run mounts stays, however old its last use');
  t.false(existsSync(idleEntry), 'an entry unused past its retention goes');
  t.is(pass.removed.environments, 1);
  t.true(isMounted(join(dataDir, 'workspaces', running)));
  await svc.request('POST', `/runs/${running}/cancel`, { body: { reason: 'done' } });
  await waitForRunState(svc, running, ['cancelled', 'failed', 'succeeded'], 60_000);
});
