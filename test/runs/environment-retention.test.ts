// Retention of kept repository environments, for real: a pass unmounts an ended run's workspace and
// home over a kept environment before it removes them (the kept tree is untouched), removes a kept
// environment unused past SVC_RETENTION_ENVIRONMENTS, and keeps one a live run mounts.
import test from 'ava';
import { existsSync, readFileSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { isMounted } from '../../activities/environment-cache.ts';
import { forgeStack } from '../support/forge-stack.ts';
import { waitFor } from '../support/processes.ts';
import { retentionPass } from '../support/retention-pass.ts';
import { runEvents, runStdout, waitForRunState, type TestStack } from '../support/stack.ts';

const fixture = forgeStack({
  SVC_RETENTION_SANDBOXES: '1s',
  SVC_RETENTION_WORKSPACES: '1s',
  SVC_RETENTION_ENVIRONMENTS: '1h',
});
const { github } = fixture;
let svc: TestStack;

test.before(async () => {
  svc = await fixture.start();
});
test.after.always(() => fixture.stop());

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
  return fixture.register(name);
}
const dispatch = fixture.dispatch;
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

  const pass = await retentionPass(svc);
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
