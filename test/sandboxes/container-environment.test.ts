// A repository's environment on the container backend: the setup runs in a container of its own,
// its result is kept once and laid copy-on-write under later runs' workspaces and homes, which
// the agent's container sees through its bind mounts; what an agent changes stays its own.
import test from 'ava';
import { startBackendForge, type BackendForge } from '../support/backend-forge.ts';
import { runEvents, runStdout, waitForRunState, type TestStack } from '../support/stack.ts';

let backend: BackendForge;
let svc: TestStack;
let fixture: BackendForge['fixture'];

test.before(async () => {
  backend = await startBackendForge('container');
  ({ svc, fixture } = backend);
});
test.after.always(() => backend?.stop());

const ready = async (runId: string) =>
  (await runEvents(svc, runId)).find((event) => event.kind === 'environment.ready')?.payload;

test.serial('the setup runs in a container once; later runs start from its result, each on its own copy', async (t) => {
  fixture.environmentRepo(
    'boxed-env',
    [
      'setup: |',
      '  echo "setting up as $(id -u)"',
      '  mkdir -p node_modules/left-pad',
      '  echo "module.exports = 1" > node_modules/left-pad/index.js',
      '  echo warm > ~/.cache-marker',
      '',
    ].join('\n'),
  );
  const project = await fixture.register('boxed-env');
  const read = 'cat node_modules/left-pad/index.js && cat ~/.cache-marker';

  const first = await fixture.dispatch(project, `${read}\necho changed > node_modules/left-pad/index.js`);
  t.is((await waitForRunState(svc, first, undefined, 180_000)).state, 'succeeded');
  t.like(await ready(first), { cached: false });
  t.deepEqual(await runStdout(svc, first), ['module.exports = 1', 'warm']);
  const started = (await runEvents(svc, first)).find((event) => event.kind === 'sandbox.started');
  t.like(started?.payload, { isolation: 'container' });

  const second = await fixture.dispatch(project, read);
  t.is((await waitForRunState(svc, second, undefined, 180_000)).state, 'succeeded');
  t.like(await ready(second), { cached: true });
  t.deepEqual(
    await runStdout(svc, second),
    ['module.exports = 1', 'warm'],
    "the first run's change stayed in its own layer",
  );
  t.false(
    (await runEvents(svc, second)).some((event) => event.kind === 'environment.log'),
    'a cached run shows no setup lines',
  );
});
