// A repository's environment on the Kubernetes backend (the stand-in API running pods on Podman):
// the setup runs in a pod of its own, whose workspace and home come back through its gateway when
// it ends; the agent's pod is filled from them. Kept once per key, a later run starts from the
// kept result without setting up, and an earlier run's change to it stayed in that run's layer.
import test from 'ava';
import { startBackendForge, type BackendForge } from '../support/backend-forge.ts';
import { runEvents, runStdout, waitForRunState, type TestStack } from '../support/stack.ts';

let backend: BackendForge;
let svc: TestStack;
let fixture: BackendForge['fixture'];

test.before(async () => {
  backend = await startBackendForge('kubernetes');
  ({ svc, fixture } = backend);
});
test.after.always(() => backend?.stop());

const ready = async (runId: string) =>
  (await runEvents(svc, runId)).find((event) => event.kind === 'environment.ready')?.payload;

test.serial('the setup runs in a pod once; later runs start from its result, each on its own copy', async (t) => {
  fixture.environmentRepo(
    'podded-env',
    [
      'setup: |',
      '  mkdir -p node_modules/left-pad',
      '  echo "module.exports = 1" > node_modules/left-pad/index.js',
      '  echo warm > ~/.cache-marker',
      '',
    ].join('\n'),
  );
  t.timeout(8 * 60_000, 'three pods (a setup, two agents) and their finalizers on a 2-core machine');
  const project = await fixture.register('podded-env');
  const read = 'cat node_modules/left-pad/index.js && cat ~/.cache-marker';

  const first = await fixture.dispatch(project, `${read}\necho changed > node_modules/left-pad/index.js`);
  t.is(
    (await waitForRunState(svc, first, undefined, 180_000)).state,
    'succeeded',
    JSON.stringify(await runEvents(svc, first)).slice(-3000),
  );
  t.like(await ready(first), { cached: false }, JSON.stringify(await ready(first)));
  t.deepEqual(await runStdout(svc, first), ['module.exports = 1', 'warm']);
  const started = (await runEvents(svc, first)).find((event) => event.kind === 'sandbox.started');
  t.like(started?.payload, { isolation: 'kubernetes' });

  const second = await fixture.dispatch(project, read);
  t.is((await waitForRunState(svc, second, undefined, 180_000)).state, 'succeeded');
  t.like(await ready(second), { cached: true }, JSON.stringify(await ready(second)));
  t.deepEqual(await runStdout(svc, second), ['module.exports = 1', 'warm'], "the first run's change stayed its own");
});
