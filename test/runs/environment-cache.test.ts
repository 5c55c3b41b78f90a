// A repository environment's kept result, for real (root, bubblewrap, overlayfs): a run builds it
// once per key in a shared build, later runs with the same key mount it copy-on-write without
// setting up, a key change builds anew, concurrent runs share one build, and a base off the
// project's default branch sets up uncached. Local bare repositories stand in for GitHub.
import test from 'ava';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { forgeStack } from '../support/forge-stack.ts';
import { runEvents, runStdout, waitForRunState, type TestStack } from '../support/stack.ts';

const fixture = forgeStack();
const { github } = fixture;
let svc: TestStack;

// A setup that says which build it is (a token of its own), and leaves files in the workspace and home.
const SETUP = [
  'setup: |',
  '  echo "build $(cat /proc/sys/kernel/random/uuid)"',
  '  mkdir -p node_modules/left-pad',
  '  echo "module.exports = 1" > node_modules/left-pad/index.js',
  '  echo warm > ~/.cache-marker',
  '',
].join('\n');

const repo = (name: string) => fixture.environmentRepo(name, SETUP);

test.before(async () => {
  svc = await fixture.start();
});
test.after.always(() => fixture.stop());

const register = fixture.register;
const dispatch = fixture.dispatch;
const finished = (runId: string) => waitForRunState(svc, runId, ['succeeded', 'failed', 'cancelled'], 180_000);
const ready = async (runId: string) =>
  (await runEvents(svc, runId)).find((event) => event.kind === 'environment.ready')?.payload;
const setupLines = async (runId: string) =>
  (await runEvents(svc, runId)).filter((event) => event.kind === 'environment.log').map((event) => event.payload.text);
const PROMPT = 'cat node_modules/left-pad/index.js && cat ~/.cache-marker && git status --porcelain | wc -l';

test.serial('a second run with the same key mounts the kept environment: no setup, the same files', async (t) => {
  repo('kept');
  const project = await register('kept');
  const first = await dispatch(project, PROMPT);
  t.is((await finished(first)).state, 'succeeded');
  t.like(await ready(first), { cached: false });
  t.is((await setupLines(first)).filter((line) => line.startsWith('build ')).length, 1);
  const entries = join(svc.config.dataDir, 'environments', project);
  const key = (await ready(first)).key as string;
  t.true(existsSync(join(entries, key, 'workspace', 'node_modules', 'left-pad', 'index.js')));
  t.false(existsSync(join(entries, key, 'workspace', 'package-lock.json')), 'only what the setup added is kept');

  const second = await dispatch(project, PROMPT);
  const run = await finished(second);
  t.is(run.state, 'succeeded', JSON.stringify(run));
  t.like(await ready(second), { cached: true, key });
  t.false('uncached' in (await ready(second)), 'only a run set up uncached says why');
  t.deepEqual(await setupLines(second), [], 'no setup ran');
  t.deepEqual(await runStdout(svc, second), ['module.exports = 1', 'warm', '0']);
});

test.serial('a change to a cache-key file builds anew', async (t) => {
  repo('rekeyed');
  const project = await register('rekeyed');
  const first = await dispatch(project, PROMPT);
  await finished(first);
  github.commit('acme', 'rekeyed', { 'package-lock.json': '{"lockfileVersion": 3, "packages": {}}\n' }, 'Lock');
  t.is((await svc.request('POST', `/projects/${project}/refresh`)).status, 200);
  const second = await dispatch(project, PROMPT);
  t.is((await finished(second)).state, 'succeeded');
  t.like(await ready(second), { cached: false });
  t.not((await ready(second)).key, (await ready(first)).key);
  t.is((await setupLines(second)).filter((line) => line.startsWith('build ')).length, 1);
});

test.serial('two runs at once share one build: the same setup lines, one build', async (t) => {
  github.createRepo('acme', 'shared', {
    files: {
      '.gitignore': 'node_modules/\n',
      'package-lock.json': '{}\n',
      '.svc/environment.yaml': SETUP.replace('setup: |\n', 'setup: |\n  sleep 3\n'),
    },
  });
  const project = await register('shared');
  const [a, b] = await Promise.all([dispatch(project, PROMPT), dispatch(project, PROMPT)]);
  for (const runId of [a, b]) t.is((await finished(runId)).state, 'succeeded');
  const builds = [...(await setupLines(a)), ...(await setupLines(b))].filter((line) => line.startsWith('build '));
  t.is(builds.length, 2, builds.join('\n'));
  t.is(builds[0], builds[1], 'both followed the one build');
  t.deepEqual(await runStdout(svc, b), ['module.exports = 1', 'warm', '0']);
});

test.serial("a base off the project's default branch sets up uncached, in its own workspace", async (t) => {
  repo('pinned');
  const side = github.commit('acme', 'pinned', { 'notes.txt': 'side\n' }, 'Side', 'side');
  const project = await register('pinned');
  const runId = await dispatch(project, PROMPT, { baseCommit: side });
  const run = await finished(runId);
  t.is(run.state, 'succeeded', JSON.stringify(run));
  t.like(await ready(runId), { cached: false, uncached: "the base is not on the project's default branch" });
  t.deepEqual(await runStdout(svc, runId), ['module.exports = 1', 'warm', '0']);
  const entries = join(svc.config.dataDir, 'environments', project);
  t.deepEqual(existsSync(entries) ? readdirSync(entries) : [], [], 'nothing kept');
});
