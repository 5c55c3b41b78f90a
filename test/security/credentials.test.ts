// Attack: walk off with svc's forge credential. Every route a sandbox can call that used to hand
// out the operator's GitHub token (git-credential, finalize-intent) answers without it, the
// agent's environment has no svc credential, and svc's token shows up nowhere in the run.
import test from 'ava';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { waitFor } from '../support/processes.ts';
import { startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';
import { reported, runAttack } from './hostile-agent.ts';

const github = new GitHubStandIn();
const forge = new PullRequestsStandIn();
const FORGE_TOKEN = 'ghp_operatorsforgetoken0123456789abcdefgh';
let svc: TestStack;

test.before(async () => {
  await forge.start();
  github.createRepo('acme', 'creds');
  svc = await startTestStack({ env: { SVC_GIT_TOKEN: FORGE_TOKEN, SVC_GITHUB_API_URL: forge.url } });
});
test.after.always(async () => {
  await svc?.stop();
  await forge.stop();
});

test.serial('from inside its sandbox an agent gets no push credential and finds none', async (t) => {
  const project = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/creds' } })).body
    .project.id;
  const prompt = [
    'echo credential=$(curl -s -m 5 -X POST "$SVC_BASE_URL/runs/$SVC_RUN_ID/git-credential")',
    'echo intent=$(curl -s -m 5 "$SVC_BASE_URL/runs/$SVC_RUN_ID/finalize-intent")',
    'echo env_has_token=$(env -u SVC_PROMPT | grep -c -E "ghp_|SVC_API_TOKEN|GIT_TOKEN")',
    'echo helper=$(git config --get-all credential.helper | head -1)',
    'git credential fill <<EOF 2>/dev/null | grep -c password | sed ' +
      '"s/^/filled=/"\nprotocol=https\nhost=github.com\nEOF',
  ].join('\n');
  const { run, stdout, everything } = await runAttack(svc, prompt, { project });
  t.is(run.state, 'succeeded', JSON.stringify(run));
  t.is(reported(stdout, 'credential'), '{"gitToken":null}');
  t.is(reported(stdout, 'intent'), '{"intent":null}');
  t.is(reported(stdout, 'env_has_token'), '0');
  t.is(reported(stdout, 'helper'), '');
  t.false(everything.includes(FORGE_TOKEN));
  t.deepEqual(
    (await svc.request('POST', `/runs/${run.id}/git-credential`)).body,
    { gitToken: null },
    'not even the operator gets it from svc',
  );
});

test.serial('a parked finalize intent carries no credential', async (t) => {
  // The sandbox is told a dead address for svc, so the intent stays parked long enough to read it.
  const parked = await startTestStack({
    env: {
      SVC_GIT_TOKEN: FORGE_TOKEN,
      SVC_GITHUB_API_URL: forge.url,
      SVC_API_URL: 'http://127.0.0.1:9',
      SVC_FINALIZE_TIMEOUT_MS: '10000',
    },
  });
  t.teardown(() => parked.stop());
  github.createRepo('acme', 'parked');
  const project = (await parked.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/parked' } }))
    .body.project.id;
  const runId = (
    await parked.request('POST', '/runs', {
      body: { agent: 'shell', project, prompt: 'echo x >> README.md\ngit commit -qam x' },
    })
  ).body.run.id;
  const intent = await waitFor(
    async () => (await parked.request('GET', `/runs/${runId}/finalize-intent`)).body?.intent ?? undefined,
    'the intent to be parked',
  );
  t.like(intent, { version: 1, push: false, handoff: 'bundle' });
  t.false('gitToken' in intent);
  t.false(JSON.stringify(intent).includes(FORGE_TOKEN));
  t.like(await waitForRunState(parked, runId), { state: 'failed', failureReason: 'finalize_unposted' });
});
