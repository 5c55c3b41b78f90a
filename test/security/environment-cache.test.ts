// Attack: a run's agent writes to and deletes from the kept environment it starts from (its
// node_modules, its home's cache). Each run sees the kept tree through its own copy-on-write
// overlay: its writes and deletions land in its own layer, never in the kept tree, which is root's
// behind a root-only directory, and the next run starts from the tree as the build left it.
import test from 'ava';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { runEvents, runStdout, startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

const github = new GitHubStandIn();
const forge = new PullRequestsStandIn();
let svc: TestStack;

test.before(async () => {
  await forge.start();
  svc = await startTestStack({ env: { SVC_GIT_TOKEN: 'ghp_test', SVC_GITHUB_API_URL: forge.url } });
});
test.after.always(async () => {
  await svc?.stop();
  await forge.stop();
});

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
