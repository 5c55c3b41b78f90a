// Attack: with svc acting as a GitHub App, stretch the credential a sandbox may ask for. The
// git-credential route answers a run's sandbox with an installation token for its own
// repository only (contents and metadata; no PR API), which the forge refuses for any other
// repository; one run's token cannot ask for another run's credential; and neither the App's
// private key nor the operator's PAT reaches the sandbox or the run's events.
import test from 'ava';
import { mintRunToken } from '../../core/run-token.ts';
import { SANDBOX_PERMISSIONS } from '../../platform/forge-credentials.ts';
import { GitHubAppStandIn } from '../support/github-app-standin.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';
import { reported, runAttack } from './hostile-agent.ts';

const github = new GitHubStandIn();
const PAT = 'ghp_operatorspatforthisapptest0123456789ab';
const forge = new GitHubAppStandIn(PAT);
let svc: TestStack;
const projects: Record<string, string> = {};

test.before(async () => {
  await forge.start();
  github.createRepo('acme', 'alpha');
  github.createRepo('acme', 'beta');
  // Installed on the whole account: what keeps a token to one repository is the token request.
  const installation = forge.install('acme');
  svc = await startTestStack({
    env: {
      SVC_GITHUB_API_URL: forge.url,
      SVC_GIT_TOKEN: PAT,
      SVC_GITHUB_APP_ID: String(forge.app.id),
      SVC_GITHUB_APP_PRIVATE_KEY: forge.app.pem,
      SVC_GITHUB_APP_INSTALLATION_ID: String(installation),
    },
  });
  for (const name of ['alpha', 'beta'])
    projects[name] = (
      await svc.request('POST', '/projects', { body: { gitUrl: `https://github.com/acme/${name}` } })
    ).body.project.id;
});
test.after.always(async () => {
  await svc?.stop();
  await forge.stop();
});

const atForge = (path: string, token: string, method = 'GET') =>
  fetch(`${forge.url}${path}`, {
    method,
    headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
    body: method === 'GET' ? undefined : JSON.stringify({ head: 'x', base: 'main', title: 't', body: 'b' }),
  }).then((response) => response.status);

test.serial("a sandbox's git-credential opens its own repository and nothing else", async (t) => {
  const prompt = [
    'echo credential=$(curl -s -m 10 -X POST "$SVC_BASE_URL/runs/$SVC_RUN_ID/git-credential")',
    'echo env_has_secret=$(env -u SVC_PROMPT | grep -c -E "ghp_|PRIVATE KEY|SVC_GITHUB_APP")',
  ].join('\n');
  const { run, stdout, everything } = await runAttack(svc, prompt, { project: projects.alpha });
  t.is(run.state, 'succeeded', JSON.stringify(run));
  const { gitToken } = JSON.parse(reported(stdout, 'credential') ?? '{}') as { gitToken?: string };
  t.regex(gitToken ?? '', /^ghs_/, 'an installation token, not the PAT');
  t.is(reported(stdout, 'env_has_secret'), '0');
  const issued = forge.issued.find((candidate) => candidate.token === gitToken)!;
  t.deepEqual(issued.repositories, ['alpha']);
  t.deepEqual(issued.permissions, SANDBOX_PERMISSIONS);

  t.is(await atForge('/repos/acme/alpha', gitToken!), 200, 'its own repository');
  t.is(await atForge('/repos/acme/beta', gitToken!), 404, 'not another repository of the same installation');
  t.is(await atForge('/repos/acme/beta/pulls', gitToken!), 404);
  t.is(await atForge('/repos/acme/alpha/pulls', gitToken!, 'POST'), 403, 'no pull-request API');
  t.is(await atForge('/repos/acme/alpha/pulls', PAT), 200, 'the stand-in does serve the PAT');

  t.false(everything.includes(PAT), 'the PAT is nowhere in the run');
  t.false(everything.includes(forge.app.pem.split('\n')[1]!), 'nor the App key');
  t.true(forge.jwts.length > 0 && forge.jwts.every((check) => check.ok));
});

test.serial("one run's token cannot ask for another run's credential", async (t) => {
  const dispatch = async (project: string) =>
    (await svc.request('POST', '/runs', { body: { agent: 'shell', project, prompt: 'sleep 30' } })).body.run.id;
  const [runA, runB] = [await dispatch(projects.alpha!), await dispatch(projects.beta!)];
  for (const id of [runA, runB]) await waitForRunState(svc, id, ['running']);
  const stolen = await svc.request('POST', `/runs/${runB}/git-credential`, { token: mintRunToken(svc.token, runA) });
  t.is(stolen.status, 403);
  t.false(stolen.text.includes('ghs_'));
  const own = await svc.request('POST', `/runs/${runB}/git-credential`, { token: mintRunToken(svc.token, runB) });
  t.is(own.status, 200, own.text);
  const issued = forge.issued.find((candidate) => candidate.token === own.body.gitToken)!;
  t.deepEqual(issued.repositories, ['beta']);
  for (const id of [runA, runB]) await svc.request('POST', `/runs/${id}/cancel`, { body: {} });
});
