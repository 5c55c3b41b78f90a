// `svc runs diff` as a user runs it: a real `svc` process against a running server (PostgreSQL when
// there is one), on a run that committed a change: plain when stdout is not a terminal, coloured on
// request, the API's document with --output json, and a clear exit for a run with nothing to show.
import test from 'ava';
import { remote, svcCli } from '../support/cli.ts';
import { suitePostgresUrl } from '../support/env.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

const github = new GitHubStandIn();
const forge = new PullRequestsStandIn();
let svc: TestStack;
let runId: string;

test.before(async () => {
  await forge.start();
  github.createRepo('acme', 'cli-diff', { files: { 'app.txt': 'one\n', 'old.txt': 'kept\n'.repeat(10) } });
  svc = await startTestStack({
    database: suitePostgresUrl() ? 'postgresql' : 'sqlite',
    env: { SVC_GIT_TOKEN: 'ghp_test', SVC_GITHUB_API_URL: forge.url },
  });
  const project = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/cli-diff' } }))
    .body.project.id;
  const prompt =
    'echo two >> app.txt && git mv old.txt new.txt && printf "\\000bin" > blob.bin && git add -A && git commit -qm ' +
    'change';
  runId = (await svc.request('POST', '/runs', { body: { agent: 'shell', project, prompt } })).body.run.id;
  await waitForRunState(svc, runId, ['succeeded'], 120_000);
});
test.after.always(async () => {
  await svc?.stop();
  await forge.stop();
});

test.serial('a unified diff, plain when stdout is not a terminal', async (t) => {
  const shown = await svcCli(['runs', 'diff', runId, ...remote(svc)]);
  t.is(shown.code, 0, shown.stderr);
  t.false(shown.stdout.includes('\x1b['), 'no colour into a pipe');
  t.true(
    shown.stdout.includes('diff --git a/app.txt b/app.txt\n--- a/app.txt\n+++ b/app.txt\n@@ -1 +1,2 @@\n one\n+two\n'),
    shown.stdout,
  );
  t.true(shown.stdout.includes('diff --git a/old.txt b/new.txt\nrename from old.txt\nrename to new.txt\n'));
  t.true(shown.stdout.includes('new file\nBinary files blob.bin and blob.bin differ'));
  const never = await svcCli(['runs', 'diff', runId, '--color', 'never', ...remote(svc)]);
  t.is(never.stdout, shown.stdout);
});

test.serial('--color always paints additions, deletions and hunks; --output json is the document', async (t) => {
  const coloured = await svcCli(['runs', 'diff', runId, '--color', 'always', ...remote(svc)]);
  t.is(coloured.code, 0, coloured.stderr);
  t.true(coloured.stdout.includes('\x1b[32m+two\x1b[0m'), coloured.stdout);
  t.true(coloured.stdout.includes('\x1b[36m@@ -1 +1,2 @@\x1b[0m'));
  const json = await svcCli(['runs', 'diff', runId, '--output', 'json', ...remote(svc)]);
  t.is(json.code, 0, json.stderr);
  const document = JSON.parse(json.stdout);
  t.deepEqual(document, (await svc.request('GET', `/runs/${runId}/diff`)).body);
  t.deepEqual(document.files.map((file: { path: string }) => file.path).sort(), ['app.txt', 'blob.bin', 'new.txt']);
});

test.serial('an unknown run and a run with no change exit 2 with the error code', async (t) => {
  const unknown = await svcCli(['runs', 'diff', 'run_000000000000', ...remote(svc)]);
  t.is(unknown.code, 2);
  t.regex(unknown.stderr, /\[not_found\]/);
  const scratch = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'true' } })).body.run.id;
  const none = await svcCli(['runs', 'diff', scratch, ...remote(svc)]);
  t.is(none.code, 2);
  t.regex(none.stderr, /\[run_has_no_change\]/);
});
