// A run's layers over a kept environment, lost (a host's reboot, an unmount) while the run goes on:
// the next step that reads its workspace (a live diff, the finalizer) mounts them again and sees
// its files; when the kept entry is gone meanwhile, the run fails saying so rather than see an
// empty workspace. For real (root, bubblewrap, overlayfs); the agent waits on a directory of its
// own (read through to the upper layer, so a file put there from outside reaches it).
import test from 'ava';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { waitFor } from '../support/processes.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { runEvents, runStdout, startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

const github = new GitHubStandIn();
const forge = new PullRequestsStandIn();
let svc: TestStack;

test.before(async () => {
  await forge.start();
  svc = await startTestStack({
    env: { SVC_GIT_TOKEN: 'ghp_test', SVC_GITHUB_API_URL: forge.url, SVC_FINALIZE_TIMEOUT_MS: '60000' },
  });
  github.createRepo('acme', 'remount', {
    files: {
      '.gitignore': 'node_modules/\nsignal/\n',
      'package-lock.json': '{"lockfileVersion": 3}\n',
      '.svc/environment.yaml':
        'setup: |\n  mkdir -p node_modules/left-pad\n  echo "module.exports = 1" > node_modules/left-pad/index.js\n',
    },
  });
});
test.after.always(async () => {
  await svc?.stop();
  await forge.stop();
});

// Commits, says so, waits for a file in signal/, then reads the setup's file again.
const PROMPT = [
  'mkdir signal && echo note > notes.txt && git add notes.txt && git commit -qm "Add notes" && echo waiting',
  'until [ -n "$(ls signal)" ]; do sleep 0.2; done',
  '(cat node_modules/left-pad/index.js || true)',
].join(' && ');

let project: string;
const dispatch = async () => {
  project ??= (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/remount' } })).body
    .project.id as string;
  return (await svc.request('POST', '/runs', { body: { agent: 'shell', project, prompt: PROMPT } })).body.run
    .id as string;
};
const layers = (runId: string) => join(svc.config.dataDir, 'overlays', runId);
const record = (runId: string) =>
  JSON.parse(readFileSync(join(layers(runId), 'layers.json'), 'utf8')) as {
    entry: string;
    workspace: string;
    home: string;
  };
const waiting = (runId: string) =>
  waitFor(async () => (await runStdout(svc, runId)).includes('waiting') || undefined, 'the agent waiting', 180_000);
/** Lets the agent go on: a file in its signal/ directory's upper layer, which its own mount reads through to. */
const signal = (runId: string) => writeFileSync(join(layers(runId), 'workspace', 'upper', 'signal', 'go'), '');
/** Whatever happened, the agent does not wait on after its test. */
const released = (t: { teardown: (fn: () => void) => void }, runId: string) =>
  t.teardown(() => {
    try {
      signal(runId);
    } catch {
      // it never got as far as waiting
    }
  });
const setupFile = (workspace: string) => join(workspace, 'node_modules', 'left-pad', 'index.js');

test.serial('a workspace unmounted under a live run is mounted again by its diff and its finalizer', async (t) => {
  const runId = await dispatch();
  released(t, runId);
  await waiting(runId);
  const { workspace } = record(runId);
  execFileSync('umount', ['--lazy', workspace]);
  t.false(existsSync(setupFile(workspace)), 'unmounted: the setup files are not there');

  const diff = await svc.request('GET', `/runs/${runId}/diff`);
  t.is(diff.status, 200, diff.text);
  t.like(diff.body, { source: 'workspace', files: [{ path: 'notes.txt', status: 'added' }] });
  t.true(existsSync(setupFile(workspace)), 'the diff mounted it again');

  execFileSync('umount', ['--lazy', workspace]);
  signal(runId);
  const run = await waitForRunState(svc, runId, ['succeeded', 'failed', 'cancelled'], 180_000);
  t.is(run.state, 'succeeded', JSON.stringify(run));
  t.is((await runStdout(svc, runId)).at(-1), 'module.exports = 1');
  const result = (await runEvents(svc, runId)).find((event) => event.kind === 'finalize.result')?.payload;
  t.like(result, { pushed: true, commitsAhead: 1 }, 'the finalizer saw the commit: its workspace was mounted again');
});

test.serial('a kept environment removed while unmounted: the run fails saying so', async (t) => {
  const runId = await dispatch();
  released(t, runId);
  await waiting(runId);
  const { entry, workspace, home } = record(runId);
  execFileSync('umount', ['--lazy', workspace]);
  execFileSync('umount', ['--lazy', home]);
  rmSync(entry, { recursive: true, force: true });

  const diff = await svc.request('GET', `/runs/${runId}/diff`);
  t.is(diff.status, 409, diff.text);
  t.regex(diff.body.error.message, /kept environment .* was removed/);
  t.false(existsSync(join(workspace, 'notes.txt')), 'nothing seen in its place');

  signal(runId);
  const run = await waitForRunState(svc, runId, ['succeeded', 'failed', 'cancelled'], 180_000);
  t.is(run.state, 'failed', JSON.stringify(run));
  const failure = (await runEvents(svc, runId)).find((event) => event.kind === 'run.internal_failure')?.payload;
  t.regex(String(failure?.message), /kept environment this run's workspace is laid over was removed/);
});
