// Attack: a run's agent writes to and deletes from the kept environment it starts from (its
// node_modules, its home's cache). Each run sees the kept tree through its own copy-on-write
// overlay: its writes and deletions land in its own layer, never in the kept tree, which is root's
// behind a root-only directory, and the next run starts from the tree as the build left it. And a
// hostile setup that hard-links the project clone's git objects into what it leaves (where the
// kernel lets it: fs.protected_hardlinks=0) gets copies kept, never a way to change the clone.
import test from 'ava';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { forgeStack } from '../support/forge-stack.ts';
import { runEvents, runStdout, waitForRunState, type TestStack } from '../support/stack.ts';

const fixture = forgeStack();
const { github } = fixture;
let svc: TestStack;

test.before(async () => {
  svc = await fixture.start();
});
test.after.always(() => fixture.stop());

test.serial(
  "an agent's writes and deletions in a kept environment reach neither the kept tree nor the next run",
  async (t) => {
    github.createRepo('acme', 'tampered', {
      files: {
        '.gitignore': 'node_modules/\n',
        'package-lock.json': '{}\n',
        '.svc/environment.yaml': [
          'setup: |',
          '  mkdir -p node_modules/left-pad',
          '  echo "module.exports = 1" > node_modules/left-pad/index.js',
          '  echo other > node_modules/other.js',
          '  echo warm > ~/.cache-marker',
          '',
        ].join('\n'),
      },
    });
    const project = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/tampered' } }))
      .body.project.id as string;
    const dispatch = async (prompt: string) => {
      const runId = (await svc.request('POST', '/runs', { body: { agent: 'shell', project, prompt } })).body.run
        .id as string;
      const run = await waitForRunState(svc, runId, ['succeeded', 'failed', 'cancelled'], 180_000);
      t.is(run.state, 'succeeded', JSON.stringify(run));
      return runId;
    };
    const look = 'cat node_modules/left-pad/index.js; ls node_modules; cat ~/.cache-marker';
    const built = await dispatch(look);
    const key = (await runEvents(svc, built)).find((event) => event.kind === 'environment.ready')?.payload.key;

    const tampering = await dispatch(
      [
        'echo "module.exports = evil" > node_modules/left-pad/index.js',
        'rm node_modules/other.js',
        'echo planted > node_modules/planted.js',
        'echo pwned > ~/.cache-marker',
        look,
      ].join(' && '),
    );
    t.like((await runEvents(svc, tampering)).find((event) => event.kind === 'environment.ready')?.payload, {
      cached: true,
    });
    t.deepEqual(
      await runStdout(svc, tampering),
      ['module.exports = evil', 'left-pad', 'planted.js', 'pwned'],
      'the agent changed its own view',
    );

    const entry = join(svc.config.dataDir, 'environments', project, key);
    t.is(
      readFileSync(join(entry, 'workspace', 'node_modules', 'left-pad', 'index.js'), 'utf8'),
      'module.exports = 1\n',
    );
    t.deepEqual(readdirSync(join(entry, 'workspace', 'node_modules')).sort(), ['left-pad', 'other.js']);
    t.is(readFileSync(join(entry, 'home', '.cache-marker'), 'utf8'), 'warm\n');
    const stats = statSync(entry);
    t.is(stats.uid, 0, "the kept tree is root's");
    t.is(stats.mode & 0o777, 0o700, 'behind a directory only root enters');

    const next = await dispatch(look);
    t.deepEqual(await runStdout(svc, next), ['module.exports = 1', 'left-pad', 'other.js', 'warm']);
  },
);

test.serial("a setup that hard-links the clone's objects into its result changes none of them", async (t) => {
  // Where the kernel refuses links to files one does not own (this machine's default), the setup
  // could not make the link at all: the test opens that door, as a host may have it open.
  const sysctl = '/proc/sys/fs/protected_hardlinks';
  const was = readFileSync(sysctl, 'utf8').trim();
  writeFileSync(sysctl, '0');
  t.teardown(() => writeFileSync(sysctl, was));
  github.createRepo('acme', 'linker', {
    files: {
      '.gitignore': 'node_modules/\n',
      'package-lock.json': '{}\n',
      '.svc/environment.yaml': [
        'setup: |',
        '  mkdir -p node_modules',
        '  n=0; for f in $(find .git/objects -type f); do n=$((n+1)); ln "$f" "node_modules/obj$n"; done',
        '  echo "linked $n"',
        '',
      ].join('\n'),
    },
  });
  const project = await fixture.register('linker');
  const clone = join(svc.config.projectsRoot, 'acme', 'linker', '.git', 'objects');
  const objects = () =>
    readdirSync(clone, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => join(entry.parentPath, entry.name));
  const before = objects();
  t.true(before.length > 0);
  const runId = await fixture.dispatch(project, 'ls node_modules | wc -l');
  const run = await waitForRunState(svc, runId, ['succeeded', 'failed', 'cancelled'], 180_000);
  t.is(run.state, 'succeeded', JSON.stringify(run));
  const setup = (await runEvents(svc, runId)).filter((event) => event.kind === 'environment.log');
  t.true(
    setup.some((event) => /^linked [1-9]/.test(event.payload.text)),
    JSON.stringify(setup.map((event) => event.payload.text)),
  );
  // Workspaces' hand-over makes them 0444 (decision 0048); a write bit would be the setup's doing.
  for (const path of before) t.is(statSync(path).mode & 0o222, 0, `${path} is writable by no one`);
  const key = (await runEvents(svc, runId)).find((event) => event.kind === 'environment.ready')?.payload.key;
  const kept = join(svc.config.dataDir, 'environments', project, key, 'workspace', 'node_modules');
  for (const name of readdirSync(kept)) t.is(statSync(join(kept, name)).nlink, 1, `${name} is a copy of its own`);
});
