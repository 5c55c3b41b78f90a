// GET /runs/{id}/diff for real: a shell agent commits a change of every kind (modified, added,
// deleted, renamed, binary, too big to show) to a project on local bare repositories standing in
// for GitHub; the diff is read while the run goes on (from its workspace) and after it (from the
// pushed branch), and a run with nothing to show answers a clear error.
import test from 'ava';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { waitFor } from '../support/processes.ts';
import { startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

const github = new GitHubStandIn();
const forge = new PullRequestsStandIn();
let svc: TestStack;

test.before(async () => {
  await forge.start();
  for (const name of ['shown', 'live', 'empty'])
    github.createRepo('acme', name, {
      files: { 'src/app.txt': 'one\ntwo\nthree\n', 'notes.md': '# notes\n', 'old/name.txt': 'moved\n'.repeat(20) },
    });
  svc = await startTestStack({
    env: { SVC_GIT_TOKEN: 'ghp_test', SVC_GITHUB_API_URL: forge.url, SVC_FINALIZE_TIMEOUT_MS: '60000' },
  });
});
test.after.always(async () => {
  await svc?.stop();
  await forge.stop();
});

const register = async (name: string) =>
  (await svc.request('POST', '/projects', { body: { gitUrl: `https://github.com/acme/${name}` } })).body.project
    .id as string;
const dispatch = async (project: string, prompt: string) =>
  (await svc.request('POST', '/runs', { body: { agent: 'shell', project, prompt } })).body.run.id as string;

/** Commits one change of every kind the diff names. */
const CHANGE = [
  'printf "one\\nTWO\\nthree\\nfour\\n" > src/app.txt',
  'printf "def hello():\\n    return 1\\n" > src/hello.py',
  'git rm -q notes.md',
  'mkdir -p new && git mv old/name.txt new/name.txt',
  'printf "\\000\\001\\002binary" > logo.bin',
  'seq 1 40000 > big.txt',
  'git add -A && git commit -qm "agent change"',
].join(' && ');

test.serial('after the run: every file of the pushed branch, bounded, with its patch', async (t) => {
  const runId = await dispatch(await register('shown'), CHANGE);
  const run = await waitForRunState(svc, runId, ['succeeded'], 120_000);
  const response = await svc.request('GET', `/runs/${runId}/diff`);
  t.is(response.status, 200, response.text);
  const diff = response.body;
  t.is(diff.source, 'branch');
  t.regex(diff.baseCommit, /^[0-9a-f]{40}$/);
  t.is(
    diff.headCommit,
    github.git(`${github.root}/acme/shown.git`, 'rev-parse', `svc/${runId}`),
    "the head is the pushed branch's tip",
  );
  const byPath = Object.fromEntries(diff.files.map((file: any) => [file.path, file]));
  t.like(byPath['src/app.txt'], { status: 'modified', additions: 2, deletions: 1, binary: false });
  t.true(byPath['src/app.txt'].patch.startsWith('@@ -1,3 +1,4 @@'), byPath['src/app.txt'].patch);
  t.true(byPath['src/app.txt'].patch.includes('+TWO\n'));
  t.like(byPath['src/hello.py'], { status: 'added', additions: 2, deletions: 0 });
  t.like(byPath['notes.md'], { status: 'deleted', additions: 0, deletions: 1 });
  t.like(byPath['new/name.txt'], { status: 'renamed', oldPath: 'old/name.txt', additions: 0, deletions: 0 });
  t.like(byPath['logo.bin'], { status: 'added', binary: true });
  t.is(byPath['logo.bin'].patch, undefined, 'a binary file has no patch');
  t.like(byPath['big.txt'], { status: 'added', additions: 40000, binary: false });
  t.is(byPath['big.txt'].patch, undefined, 'a patch over the per-file limit is left out');
  t.true(diff.truncated);
  t.is(diff.files.length, 6);
  t.is(run.filesChanged, 6, 'the same files the run counted');
  github.mergeBranch('acme', 'shown', `svc/${runId}`);
  const merged = await svc.request('GET', `/runs/${runId}/diff`);
  t.is(merged.status, 200, merged.text);
  t.deepEqual(merged.body.files, diff.files, 'merged into its base, the change is still the same');
});

test.serial('while the run goes on: its workspace commits so far; then an unknown run is 404', async (t) => {
  const runId = await dispatch(
    await register('live'),
    'echo live >> src/app.txt && git commit -qam "first step" && echo committed && sleep 300',
  );
  const diff = await waitFor(
    async () => {
      const response = await svc.request('GET', `/runs/${runId}/diff`);
      return response.status === 200 ? response.body : undefined;
    },
    'the live diff',
    90_000,
  );
  t.is(diff.source, 'workspace');
  t.like(diff.files, [{ path: 'src/app.txt', status: 'modified', additions: 1, deletions: 0 }]);
  t.true(diff.files[0].patch.includes('+live\n'));
  t.false(diff.truncated);
  t.is((await svc.request('GET', `/runs/${runId}`)).body.run.state, 'running');
  await svc.request('POST', `/runs/${runId}/cancel`, { body: {} });
  const missing = await svc.request('GET', '/runs/run_doesnotexist/diff');
  t.is(missing.status, 404);
  t.is(missing.body.error.code, 'not_found');
});

test.serial('a run with nothing to show: 409 run_has_no_change, with the reason', async (t) => {
  const runId = await dispatch(await register('empty'), 'echo nothing to do');
  await waitForRunState(svc, runId, undefined, 120_000);
  const response = await svc.request('GET', `/runs/${runId}/diff`);
  t.is(response.status, 409, response.text);
  t.is(response.body.error.code, 'run_has_no_change');
  t.regex(response.body.error.message, /nothing was pushed or salvaged|no commits beyond its base/);
  const scratch = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'true' } })).body.run.id;
  const noProject = await svc.request('GET', `/runs/${scratch}/diff`);
  t.is(noProject.body.error.code, 'run_has_no_change');
  t.regex(noProject.body.error.message, /no project/);
});
