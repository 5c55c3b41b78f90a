// A repository's environment (.svc/environment.yaml) for real: its setup runs in the run's
// sandboxed workspace before the agent starts, and the agent finds what it made (in the workspace
// and in its home); a failing or timed-out setup fails the run with its lines in the run's events;
// an invalid file fails the run at once, naming what is wrong; services are refused on bubblewrap; a
// cancel stops a setup. Local bare repositories stand in for GitHub; the agent is the shell agent.
import test from 'ava';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { forgeStack } from '../support/forge-stack.ts';
import { waitFor } from '../support/processes.ts';
import { runEvents, runStdout, waitForRunState, type TestStack } from '../support/stack.ts';

const fixture = forgeStack();
const { github } = fixture;
let svc: TestStack;

const repo = fixture.environmentRepo;

test.before(async () => {
  svc = await fixture.start();
});
test.after.always(() => fixture.stop());

const register = fixture.register;
const dispatch = fixture.dispatch;
const setupLines = async (runId: string) =>
  (await runEvents(svc, runId)).filter((event) => event.kind === 'environment.log').map((event) => event.payload.text);

test.serial('the setup runs before the agent, which finds what it made in its workspace and home', async (t) => {
  repo(
    'built',
    [
      'setup: |',
      '  echo "setting up in $PWD"',
      '  mkdir -p node_modules/left-pad',
      '  echo "module.exports = 1" > node_modules/left-pad/index.js',
      '  echo warm > ~/.npm-cache-marker',
      '  echo "a warning" >&2',
      'setupTimeout: 5m',
      '',
    ].join('\n'),
  );
  const runId = await dispatch(
    await register('built'),
    'cat node_modules/left-pad/index.js && cat ~/.npm-cache-marker && git status --porcelain | wc -l',
  );
  const run = await waitForRunState(svc, runId, ['succeeded', 'failed', 'cancelled'], 120_000);
  t.is(run.state, 'succeeded', JSON.stringify(run));
  const events = await runEvents(svc, runId);
  const kinds = events.map((event) => event.kind);
  const building = events.find((event) => event.kind === 'environment.building');
  const ready = events.find((event) => event.kind === 'environment.ready');
  t.regex(building?.payload.key, /^[0-9a-f]{64}$/);
  t.like(ready?.payload, { key: building?.payload.key, cached: false });
  t.true(Number.isInteger(ready?.payload.durationMs) && ready?.payload.durationMs >= 0, JSON.stringify(ready));
  t.true(kinds.indexOf('environment.ready') < kinds.indexOf('sandbox.started'), 'the agent starts after the setup');
  const lines = await setupLines(runId);
  t.true(
    lines.some((line) => /^setting up in \S+/.test(line)),
    lines.join('\n'),
  );
  t.true(
    events.some(
      (event) =>
        event.kind === 'environment.log' && event.payload.stream === 'stderr' && event.payload.text === 'a warning',
    ),
  );
  t.deepEqual(await runStdout(svc, runId), ['module.exports = 1', 'warm', '0'], 'the agent saw both, and a clean tree');
});

test.serial('a failing setup fails the run environment_setup_failed, its lines in the events', async (t) => {
  repo('broken', 'setup: |\n  echo "installing"\n  echo "npm ERR! missing package" >&2\n  exit 3\n  echo never\n');
  const runId = await dispatch(await register('broken'), 'echo the agent ran');
  const run = await waitForRunState(svc, runId, ['succeeded', 'failed', 'cancelled'], 120_000);
  t.like(run, { state: 'failed', failureReason: 'environment_setup_failed' });
  const events = await runEvents(svc, runId);
  const terminal = events.find((event) => event.kind === 'state_change' && event.payload.type === 'result');
  t.like(terminal?.payload, { failureReason: 'environment_setup_failed', exitCode: 3, timedOut: false });
  t.regex(terminal?.payload.message, /setup exited with 3/);
  t.deepEqual(await setupLines(runId), ['installing', 'npm ERR! missing package']);
  t.false(
    events.some((event) => event.kind === 'sandbox.started'),
    'the agent never started',
  );
  t.deepEqual(await runStdout(svc, runId), []);
});

test.serial("a setup's lines in the events are bounded: the first ones, a count, the last ones", async (t) => {
  repo('noisy', 'setup: |\n  seq 1 1000\n  exit 1\n');
  const runId = await dispatch(await register('noisy'), 'echo the agent ran');
  await waitForRunState(svc, runId, ['succeeded', 'failed', 'cancelled'], 120_000);
  const numbers = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => String(from + i));
  t.deepEqual(await setupLines(runId), [
    ...numbers(1, 400),
    '… 550 lines of the setup not kept',
    ...numbers(951, 1000),
  ]);
});

test.serial('a setup past its setupTimeout is stopped and fails the run', async (t) => {
  repo('slow', 'setup: |\n  echo "starting a long install"\n  sleep 120\nsetupTimeout: 2s\n');
  const runId = await dispatch(await register('slow'), 'echo the agent ran');
  const run = await waitForRunState(svc, runId, ['succeeded', 'failed', 'cancelled'], 90_000);
  t.like(run, { state: 'failed', failureReason: 'environment_setup_failed' });
  const terminal = (await runEvents(svc, runId)).find((event) => event.payload?.type === 'result');
  t.like(terminal?.payload, { timedOut: true });
  t.regex(terminal?.payload.message, /timed out after 2 s/);
  t.deepEqual(await setupLines(runId), ['starting a long install']);
});

test.serial('an invalid environment file fails the run at once, naming each problem', async (t) => {
  repo('invalid', 'setup: npm ci\nservices: [{name: Postgres, image: postgres}]\ncachekey: [package-lock.json]\n');
  const runId = await dispatch(await register('invalid'), 'echo the agent ran');
  const run = await waitForRunState(svc, runId, ['succeeded', 'failed', 'cancelled'], 60_000);
  t.like(run, { state: 'failed', failureReason: 'environment_invalid' });
  const events = await runEvents(svc, runId);
  const terminal = events.find((event) => event.payload?.type === 'result');
  t.regex(terminal?.payload.message, /\.svc\/environment\.yaml: .*unknown key cachekey/);
  t.regex(terminal?.payload.message, /services\.0\.name: a DNS label/);
  t.false(events.some((event) => event.kind.startsWith('environment.') || event.kind === 'sandbox.started'));
});

test.serial('a run whose environment declares services is refused on bubblewrap, before its agent', async (t) => {
  repo('serviced', 'setup: "true"\nservices:\n  - name: db\n    image: localhost/svc-agent:latest\n');
  const runId = await dispatch(await register('serviced'), 'echo the agent ran');
  const run = await waitForRunState(svc, runId, ['succeeded', 'failed', 'cancelled'], 60_000);
  t.like(run, { state: 'failed', failureReason: 'environment_invalid' });
  const events = await runEvents(svc, runId);
  const terminal = events.find((event) => event.payload?.type === 'result');
  t.regex(
    terminal?.payload.message,
    /services need the container or Kubernetes backend; this worker runs agents with bubblewrap/,
  );
  t.false(events.some((event) => event.kind === 'sandbox.started'));
});

test.serial('a cancel during the setup stops it; the run ends cancelled and its agent never starts', async (t) => {
  // Off the default branch, the setup runs in the run's own workspace (a shared build would go on for later runs).
  repo('cancelled', 'setup: |\n  echo "a long install"\n  sleep 297\n');
  const project = await register('cancelled');
  const side = github.commit('acme', 'cancelled', { 'side.txt': 'side\n' }, 'off main', 'side');
  t.is((await svc.request('POST', `/projects/${project}/refresh`, { body: {} })).status, 200);
  const runId = await dispatch(project, 'echo the agent ran', { baseCommit: side });
  await waitFor(
    async () => ((await setupLines(runId)).includes('a long install') ? true : undefined),
    'the setup running',
    60_000,
  );
  const setupRunning = () => spawnSync('pgrep', ['-f', '^sleep 297$']).status === 0;
  t.true(setupRunning());
  await svc.request('POST', `/runs/${runId}/cancel`, { body: { reason: 'no longer needed' } });
  const run = await waitForRunState(svc, runId, ['succeeded', 'failed', 'cancelled'], 60_000);
  t.is(run.state, 'cancelled');
  const events = await runEvents(svc, runId);
  t.false(events.some((event) => event.kind === 'sandbox.started' || event.kind === 'environment.ready'));
  await waitFor(async () => (setupRunning() ? undefined : true), "the setup's processes gone", 30_000);
  t.false(setupRunning());
});

test.serial(
  "the setup gets the project's setup and run secrets, masked in its lines; the agent only run ones",
  async (t) => {
    repo(
      'registry',
      [
        'setup: |',
        '  echo "setup sees $REGISTRY_TOKEN and $API_KEY"',
        '  printf %s "$REGISTRY_TOKEN" | sha256sum | cut -c1-16',
        'setupTimeout: 5m',
        '',
      ].join('\n'),
    );
    const project = await register('registry');
    const setSecret = (name: string, value: string, scope: string) =>
      svc.request('PUT', `/projects/${project}/secrets/${name}`, { body: { value, scope } });
    t.is((await setSecret('REGISTRY_TOKEN', 'setup-only-7c1d9e42b5', 'setup')).status, 201);
    t.is((await setSecret('API_KEY', 'run-wide-0a8f3b6e91', 'run')).status, 201);
    const runId = await dispatch(project, 'echo "agent sees [${REGISTRY_TOKEN:-nothing}] and $API_KEY"');
    t.is((await waitForRunState(svc, runId, ['succeeded', 'failed', 'cancelled'], 120_000)).state, 'succeeded');
    const lines = await setupLines(runId);
    const digest = createHash('sha256').update('setup-only-7c1d9e42b5').digest('hex').slice(0, 16);
    t.true(lines.includes(digest), `the setup had the setup secret: ${lines.join('\n')}`);
    t.true(lines.some((line) => line.startsWith('setup sees ') && !line.includes('setup-only-7c1d9e42b5')));
    t.false(JSON.stringify(lines).includes('run-wide-0a8f3b6e91'), 'masked in the setup lines');
    const [said] = await runStdout(svc, runId);
    t.true(said?.startsWith('agent sees [nothing] and '), said);
    t.false(said?.includes('run-wide-0a8f3b6e91'), 'masked in the agent output');
    t.false((await svc.request('GET', `/runs/${runId}/log`)).text.includes('setup-only-7c1d9e42b5'));

    // A base off the default branch (anyone's pushed branch) sets up in place, with no setup secret.
    const side = github.commit('acme', 'registry', { 'side.txt': 'side\n' }, 'off main', 'side');
    t.is((await svc.request('POST', `/projects/${project}/refresh`, { body: {} })).status, 200);
    const offMain = await dispatch(project, 'true', { baseCommit: side });
    t.is((await waitForRunState(svc, offMain, ['succeeded', 'failed', 'cancelled'], 120_000)).state, 'succeeded');
    const ready = (await runEvents(svc, offMain)).find((event) => event.kind === 'environment.ready');
    t.like(ready?.payload, { cached: false });
    const offLines = await setupLines(offMain);
    t.false(offLines.includes(digest), offLines.join('\n'));
    t.true(
      offLines.includes(createHash('sha256').update('').digest('hex').slice(0, 16)),
      'the setup had no setup secret',
    );
  },
);
