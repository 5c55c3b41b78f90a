// Attack: make svc act as the visitor's GitHub App. The registration pages are anonymous HTML (a
// browser coming back from GitHub carries no svc token), and with SVC_APP_CRED_STORE=data-dir the
// App stored there is the one svc acts as. A hostile visitor, without the operator's token, tries
// to get a registration state, to store their App through the callback (with a made-up state, and
// with the operator's own state seen in flight), to activate an installation, and to replace or
// remove the stored App; and a GitHub answer whose `pem` is a path tries to make svc read a file as
// its key. Each is refused and changes nothing, while the operator's armed flow works end to end.
import test from 'ava';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dataPaths } from '../../platform/config.ts';
import { readStoredGitHubApp } from '../../platform/github-app.ts';
import { GitHubApiStandIn } from '../support/github-api-stand-in.ts';
import { GitHubAppStandIn, serveManifestConversions, standInApp } from '../support/github-app-standin.ts';
import { confirmationOf, operatorBrowser, RegistrationBrowser, unescapeHtml } from '../support/registration-browser.ts';
import { startTestStack, type TestResponse, type TestStack } from '../support/stack.ts';

const PAT = 'ghp_operatorspatforregistrationtests0123456';
const forge = new GitHubAppStandIn(PAT);
let svc: TestStack;
const serveLog: string[] = [];

test.before(async () => {
  await forge.start();
  svc = await startTestStack({
    worker: false,
    env: {
      SVC_GITHUB_API_URL: forge.url,
      SVC_GIT_TOKEN: PAT,
      GITHUB_TOKEN: '',
      SVC_APP_CRED_STORE: 'data-dir',
      SVC_PUBLIC_URL: 'http://svc.example.test',
    },
    log: (line) => serveLog.push(line),
  });
});
test.after.always(async () => {
  await svc?.stop();
  await forge.stop();
});

const storedFile = () => dataPaths.githubApp(svc.config.dataDir);
const conversions = () => forge.requests.filter((request) => request.path.startsWith('/app-manifests/')).length;
const stateOf = (page: TestResponse) =>
  new URL(unescapeHtml(/<form method="post" action="([^"]+)">/.exec(page.text)![1]!)).searchParams.get('state')!;

function assertNoForm(t: any, page: TestResponse) {
  t.is(page.status, 403, page.text);
  t.regex(page.headers.get('content-type') ?? '', /^text\/html/);
  t.is(page.headers.get('cache-control'), 'no-store');
  t.is(page.headers.get('set-cookie'), null, 'no cookie for a visitor');
  t.false(page.text.includes('state='), 'no state');
  t.false(page.text.includes('<form'), 'no form');
  t.false(page.text.includes('<script'));
}

test.serial('the serve log says which GitHub identity svc acts with', (t) => {
  t.true(
    serveLog.includes('github: acting as the personal access token (SVC_GIT_TOKEN or GITHUB_TOKEN)'),
    serveLog.join('\n'),
  );
  t.false(serveLog.join('\n').includes(PAT), 'never the token itself');
});

test.serial('an anonymous visitor gets no registration state, whatever it sends', async (t) => {
  const visitor = new RegistrationBrowser(svc);
  assertNoForm(t, await visitor.open('/github-app/register'));
  assertNoForm(t, await visitor.open('/github-app/register?arm=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'));
  const forged = await svc.request('GET', '/github-app/register', {
    token: null,
    headers: { cookie: 'svc_github_app=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
  });
  assertNoForm(t, forged);
  // A link the operator opened already binds nobody else.
  const armed = await svc.request('POST', '/github-app/registration');
  const operator = new RegistrationBrowser(svc);
  t.is((await operator.open(armed.body.path)).status, 200);
  assertNoForm(t, await visitor.open(armed.body.path));
  // A browser already bound that opens a new link spends it too: seen later, it binds nobody.
  const again = await svc.request('POST', '/github-app/registration');
  t.is((await operator.open(again.body.path)).status, 200);
  assertNoForm(t, await visitor.open(again.body.path));
  // Arming needs the operator's token.
  const anonymous = await svc.request('POST', '/github-app/registration', { token: null });
  t.is(anonymous.status, 401);
  t.is(anonymous.body.error.code, 'unauthorized');
});

test.serial("a visitor cannot store an App, not even with the operator's state", async (t) => {
  const visitor = new RegistrationBrowser(svc);
  const before = conversions();
  for (const state of ['made-up', 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA']) {
    const page = await visitor.returnFromGitHub(`/github-app/callback?code=${forge.manifestCode()}&state=${state}`);
    t.is(page.status, 403, page.text);
  }
  // The operator's form is on its way to GitHub; the visitor somehow has its state.
  const { browser: operator, page } = await operatorBrowser(svc);
  const state = stateOf(page);
  const code = forge.manifestCode();
  const stolen = await visitor.returnFromGitHub(`/github-app/callback?code=${code}&state=${state}`);
  t.is(stolen.status, 403, stolen.text);
  const straight = await svc.request('GET', `/github-app/callback?code=${code}&state=${state}&confirmed=1`, {
    token: null,
  });
  t.is(straight.status, 403);
  t.false(existsSync(storedFile()), 'nothing stored');
  t.is(conversions(), before, 'no code of the visitor was even converted');
  t.like((await svc.request('GET', '/github-app')).body, { mode: 'pat', app: null });

  // The operator's own state still works, in the operator's browser: GitHub's redirect, then Continue.
  const stored = await operator.returnFromGitHub(`/github-app/callback?code=${forge.manifestCode()}&state=${state}`);
  t.is(stored.status, 200, stored.text);
  t.regex(stored.text, /svc stored the App/);
  t.is(readStoredGitHubApp(svc.config.dataDir)?.appId, String(forge.app.id));
});

test.serial('a visitor cannot activate the stored App, nor replace or remove it', async (t) => {
  t.true(existsSync(storedFile()), 'the operator stored an App (the previous test)');
  const installation = forge.install('acme');
  const visitor = new RegistrationBrowser(svc);
  const bounce = await visitor.open(`/github-app/installed?installation_id=${installation}`, 'cross-site');
  t.is(bounce.status, 200);
  t.regex(confirmationOf(bounce) ?? '', /confirmed=1/, 'asks to continue, and changes nothing');
  const page = await visitor.open(confirmationOf(bounce)!);
  t.is(page.status, 403, page.text);
  t.is(readStoredGitHubApp(svc.config.dataDir)?.installationId, null, 'not activated');
  t.like((await svc.request('GET', '/github-app')).body, { mode: 'pat' });

  const before = readFileSync(storedFile(), 'utf8');
  for (const [method, path] of [
    ['DELETE', '/github-app'],
    ['POST', '/github-app/registration'],
    ['GET', '/github-app'],
  ] as const) {
    const refused = await svc.request(method, path, { token: null });
    t.is(refused.status, 401, `${method} ${path}`);
  }
  const again = await visitor.returnFromGitHub(`/github-app/callback?code=${forge.manifestCode()}&state=x`);
  t.is(again.status, 403);
  t.is(readFileSync(storedFile(), 'utf8'), before, 'the stored App is untouched');

  // The operator's own browser activates it, and the operator removes it: svc is back on its PAT.
  const { browser: operator, page: stored } = await operatorBrowser(svc);
  t.is(stored.status, 409, 'a registration never replaces a stored App');
  const activated = await operator.returnFromGitHub(`/github-app/installed?installation_id=${installation}`);
  t.is(activated.status, 200, activated.text);
  t.like((await svc.request('GET', '/github-app')).body, {
    mode: 'app',
    app: { source: 'data-dir', slug: forge.app.slug, installationId: String(installation) },
  });
  const removed = await svc.request('DELETE', '/github-app');
  t.is(removed.status, 200, removed.text);
  t.like(removed.body, { removed: { appId: String(forge.app.id) }, identity: { mode: 'pat', app: null } });
  t.false(existsSync(storedFile()));
  t.is((await svc.request('DELETE', '/github-app')).status, 404);
});

test.serial('a pem that is a path is refused, never read; a stored key that is a path is ignored', async (t) => {
  const keyFile = join(mkdtempSync(join(tmpdir(), 'svc-key-')), 'key.pem');
  writeFileSync(keyFile, standInApp().pem);
  const hostile = new GitHubApiStandIn();
  const conversion = serveManifestConversions(hostile, { ...standInApp(), pem: keyFile });
  await hostile.start();
  const other = await startTestStack({
    worker: false,
    env: {
      SVC_GITHUB_API_URL: hostile.url,
      SVC_GIT_TOKEN: PAT,
      SVC_APP_CRED_STORE: 'data-dir',
      SVC_PUBLIC_URL: 'http://svc.example.test',
    },
  });
  try {
    const { browser, page } = await operatorBrowser(other);
    const answer = await browser.returnFromGitHub(
      `/github-app/callback?code=${conversion.code()}&state=${stateOf(page)}`,
    );
    t.is(answer.status, 502, answer.text);
    t.regex(answer.text, /not a PEM private key/);
    t.false(existsSync(dataPaths.githubApp(other.config.dataDir)), 'nothing stored');

    // A stored file whose key names a path is not an App svc uses.
    writeFileSync(
      dataPaths.githubApp(other.config.dataDir),
      JSON.stringify({
        appId: '1',
        slug: 's',
        privateKey: keyFile,
        clientId: 'c',
        clientSecret: 'x',
        htmlUrl: 'https://github.com/apps/s',
        installationId: '2',
      }),
      { mode: 0o600 },
    );
    t.like((await other.request('GET', '/github-app')).body, { mode: 'pat', app: null });
  } finally {
    await other.stop();
    await hostile.stop();
  }
});
