// Registering svc as a GitHub App, for real against the App-capable GitHub stand-in: the gate, the
// operator's armed link and the browser it binds, the manifest form and its one-time state, the
// conversion of GitHub's code into credentials (shown once, or stored 0600 and never shown), the
// installation that activates the App, the operator's removal, and then a run whose clone, push and
// PR use installation tokens for its one repository and nothing more.
import test from 'ava';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dataPaths } from '../../platform/config.ts';
import { ForgeCredentials, RUN_PERMISSIONS } from '../../platform/forge-credentials.ts';
import { AppKeyError, GitHubAppService } from '../../api/services/github-app.service.ts';
import {
  ARM_TTL_MS,
  BROWSER_TTL_MS,
  GitHubAppRegistrationWindow,
  STATE_TTL_MS,
} from '../../api/services/github-app-registration.ts';
import { OneTimeSecretsRepository } from '../../db/repositories/one-time-secrets.repository.ts';
import type { ReadModel } from '../../db/orm.ts';
import { DATABASE_LEGS, postgresOrSkip } from '../support/env.ts';
import { withReadModel } from '../support/read-model-fixture.ts';
import { GitHubAppStandIn } from '../support/github-app-standin.ts';
import { confirmationOf, operatorBrowser, unescapeHtml } from '../support/registration-browser.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { runEventLines, startTestStack, waitForRunState, type TestResponse, type TestStack } from '../support/stack.ts';

const github = new GitHubStandIn();
const forge = new GitHubAppStandIn();
const stacks: TestStack[] = [];
const NO_PAT = { SVC_GIT_TOKEN: '', GITHUB_TOKEN: '' };
/** A window for services whose registration pages these tests do not open (no statement reaches it). */
const unusedWindow = new GitHubAppRegistrationWindow(new OneTimeSecretsRepository(undefined as unknown as ReadModel));
// The App's manifest names svc's public URL: registration needs one.
const PUBLIC_URL = { SVC_PUBLIC_URL: 'http://svc.example.test' };
const stackWith = async (env: Record<string, string>, worker = false) => {
  const svc = await startTestStack({
    worker,
    env: { SVC_GITHUB_API_URL: forge.url, ...NO_PAT, ...PUBLIC_URL, ...env },
  });
  stacks.push(svc);
  return svc;
};

test.before(async () => {
  await forge.start();
  github.createRepo('acme', 'appwork', { files: { 'src/app.txt': 'one\n' } });
});
test.after.always(async () => {
  for (const svc of stacks) await svc.stop();
  await forge.stop();
});

const get = (svc: TestStack, path: string) => svc.request('GET', path, { token: null });
const unescape = unescapeHtml;

/** The register page's form: where it posts, the manifest it carries, its state. */
function formOf(page: TestResponse) {
  const action = unescape(page.text.match(/<form method="post" action="([^"]+)">/)![1]!);
  const manifest = JSON.parse(unescape(page.text.match(/name="manifest" value="([^"]+)"/)![1]!));
  return { action, manifest, state: new URL(action).searchParams.get('state')! };
}

function assertHtml(t: any, response: TestResponse, status: number) {
  t.is(response.status, status, response.text);
  t.regex(response.headers.get('content-type') ?? '', /^text\/html/);
  t.is(response.headers.get('cache-control'), 'no-store');
  t.is(response.headers.get('referrer-policy'), 'no-referrer');
  t.regex(
    response.headers.get('content-security-policy') ?? '',
    /^default-src 'none'; form-action [^;]+; frame-ancestors 'none'/,
  );
  t.false(response.text.includes('<script'), 'no script on any page');
}

test('with the gate off, all three routes are 404 not_found', async (t) => {
  const svc = await stackWith({ SVC_GITHUB_APP_REGISTRATION: 'off' });
  for (const path of [
    '/github-app/register',
    '/github-app/callback?code=x&state=y',
    '/github-app/installed?installation_id=1',
  ]) {
    const response = await get(svc, path);
    t.is(response.status, 404, path);
    t.is(response.body.error.code, 'not_found');
  }
  const arming = await svc.request('POST', '/github-app/registration');
  t.is(arming.status, 404, 'nothing to arm');
  t.is(arming.body.error.code, 'not_found');
});

test('without SVC_PUBLIC_URL no registration is armed: the manifest would have no address to name', async (t) => {
  const svc = await stackWith({ SVC_GITHUB_APP_REGISTRATION: 'on', SVC_PUBLIC_URL: '' });
  const arming = await svc.request('POST', '/github-app/registration');
  t.is(arming.status, 409, arming.text);
  t.is(arming.body.error.code, 'public_url_required');
  t.regex(arming.body.error.hint, /SVC_PUBLIC_URL/);
  // No link was armed, so no browser is bound and no form (no manifest) is ever shown.
  const page = await get(svc, '/github-app/register');
  t.is(page.status, 403, page.text);
  t.false(page.text.includes('name="manifest"'));

  // A browser bound while svc had a public URL (the window lives in the data directory), then svc
  // restarted without one: the page refuses, it does not name the Host it was opened at.
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-app-'));
  const env = { SVC_GITHUB_API_URL: forge.url, ...NO_PAT, SVC_GITHUB_APP_REGISTRATION: 'on' };
  const before = await startTestStack({ worker: false, dataDir, env: { ...env, ...PUBLIC_URL } });
  const { browser } = await operatorBrowser(before);
  await before.stop();
  const after = await startTestStack({ worker: false, dataDir, env });
  t.teardown(async () => {
    await after.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const refused = await after.request('GET', '/github-app/register', {
    token: null,
    headers: { cookie: `svc_github_app=${browser.cookie}`, 'sec-fetch-site': 'same-origin' },
  });
  assertHtml(t, refused, 409);
  t.regex(refused.text, /SVC_PUBLIC_URL/);
  t.false(refused.text.includes('name="manifest"'));
});

test('register: a manifest form posting to GitHub with a one-time state; a bad org is a 400 page', async (t) => {
  const svc = await stackWith({ SVC_GITHUB_APP_REGISTRATION: 'on', SVC_PUBLIC_URL: 'https://svc.example.test' });
  const armed = await svc.request('POST', '/github-app/registration');
  t.is(armed.status, 201, armed.text);
  t.regex(armed.body.path, /^\/github-app\/register\?arm=[A-Za-z0-9_-]{32}$/);
  t.is(armed.body.url, `https://svc.example.test${armed.body.path}`);
  const { browser, page } = await operatorBrowser(svc);
  assertHtml(t, page, 200);
  t.regex(
    page.headers.get('set-cookie') ?? '',
    /^svc_github_app=[A-Za-z0-9_-]{32}; Max-Age=3600; Path=\/github-app; HttpOnly; SameSite=Strict; Secure$/,
  );
  t.is(
    page.headers.get('content-security-policy'),
    "default-src 'none'; form-action https://github.com; frame-ancestors 'none'; base-uri 'none'",
  );
  const { action, manifest, state } = formOf(page);
  t.true(action.startsWith('https://github.com/settings/apps/new?state='));
  t.regex(state, /^[A-Za-z0-9_-]{32}$/);
  t.regex(manifest.name, /^svc-forge-[a-z0-9]{6}$/);
  t.like(manifest, {
    redirect_url: 'https://svc.example.test/github-app/callback',
    setup_url: 'https://svc.example.test/github-app/installed',
    public: false,
    default_permissions: RUN_PERMISSIONS,
    hook_attributes: { active: false },
  });
  const org = formOf(await browser.open('/github-app/register?org=acme-org&name=night%20shift'));
  t.true(org.action.startsWith('https://github.com/organizations/acme-org/settings/apps/new?state='));
  t.is(org.manifest.name, 'night shift');
  t.not(org.state, state, 'every form has its own state');
  for (const bad of ['-acme', 'acme--org', 'a'.repeat(40), '<script>alert(1)</script>']) {
    const refused = await browser.open(`/github-app/register?org=${encodeURIComponent(bad)}`);
    assertHtml(t, refused, 400);
    t.false(refused.text.includes('<script>alert'), 'the input is never echoed raw');
  }
  assertHtml(t, await browser.open(`/github-app/register?name=${encodeURIComponent('<b>x</b>')}`), 400);
});

test('callback: missing, unknown and spent states are 400; failed conversion 502; else the credentials', async (t) => {
  const svc = await stackWith({ SVC_GITHUB_APP_REGISTRATION: 'on' });
  const { browser } = await operatorBrowser(svc);
  const fresh = async () => formOf(await browser.open('/github-app/register')).state;
  assertHtml(t, await browser.open('/github-app/callback'), 400);
  assertHtml(t, await browser.open(`/github-app/callback?state=${await fresh()}`), 400);
  assertHtml(t, await browser.open(`/github-app/callback?code=${forge.manifestCode()}&state=not-a-state`), 400);
  assertHtml(t, await browser.open(`/github-app/callback?code=no-such-code&state=${await fresh()}`), 502);

  const state = await fresh();
  const page = await browser.returnFromGitHub(`/github-app/callback?code=${forge.manifestCode()}&state=${state}`);
  assertHtml(t, page, 200);
  t.true(page.text.includes(`SVC_GITHUB_APP_ID=${forge.app.id}`));
  t.true(page.text.includes(forge.app.pem.split('\n')[1]!), 'the private key, shown this once');
  t.true(page.text.includes(forge.app.clientSecret));
  t.true(page.text.includes(`${forge.app.htmlUrl}/installations/new`));
  const spent = await browser.open(`/github-app/callback?code=${forge.manifestCode()}&state=${state}`);
  assertHtml(t, spent, 400);
  t.false(spent.text.includes(forge.app.clientSecret));
});

for (const leg of DATABASE_LEGS)
  test(`${leg}: the window: a link opens once within ten minutes, a state works once, in its browser`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    await withReadModel(leg, async (readModel) => {
      let now = 1_000_000;
      const window = new GitHubAppRegistrationWindow(new OneTimeSecretsRepository(readModel), () => now);
      const stale = await window.arm();
      const { code } = await window.arm();
      t.is(await window.redeemArm(stale.code), null, 'a new link replaces an unopened one');
      const bound = (await window.redeemArm(code))!;
      t.truthy(bound);
      t.is(await window.redeemArm(code), null, 'spent');
      t.true(await window.isBound(bound.browser));
      t.false(await window.isBound('made-up-but-well-shaped-value'));
      t.false(await window.isBound(undefined));
      const other = (await window.redeemArm((await window.arm()).code))!;
      const first = await window.issueState(bound.browser);
      const second = await window.issueState(bound.browser);
      t.false(await window.redeemState(first, other.browser), 'not in another browser');
      t.false(await window.redeemState(first, bound.browser), 'spent by the other browser that showed it');
      t.true(await window.redeemState(second, bound.browser));
      t.false(await window.redeemState(second, bound.browser), 'spent');
      const late = await window.issueState(bound.browser);
      now += STATE_TTL_MS;
      t.false(await window.redeemState(late, bound.browser), 'expired');
      t.false(await window.redeemState('made-up', bound.browser));
      const unopened = await window.arm();
      now += ARM_TTL_MS;
      t.is(await window.redeemArm(unopened.code), null, 'a link expires');
      now += BROWSER_TTL_MS;
      t.false(await window.isBound(bound.browser), 'a binding expires');
      now -= BROWSER_TTL_MS;
      await window.release(other.browser);
      t.false(await window.isBound(other.browser), 'released');
      t.false(
        JSON.stringify(await readModel.rows('select * from one_time_secrets', [])).includes(bound.browser),
        'only hashes are stored',
      );
    });
  });

for (const leg of DATABASE_LEGS)
  test(`${leg}: of many spends of one secret at once, exactly one succeeds`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    await withReadModel(leg, async (readModel) => {
      // Two windows on one database: two API replicas.
      const [one, two] = [0, 1].map(() => new GitHubAppRegistrationWindow(new OneTimeSecretsRepository(readModel)));
      const { code } = await one!.arm();
      const binds = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? one! : two!).redeemArm(code)));
      t.is(binds.filter(Boolean).length, 1, 'one browser bound');
      const browser = binds.find(Boolean)!.browser;
      const state = await two!.issueState(browser);
      const spends = await Promise.all(
        Array.from({ length: 8 }, (_, i) => (i % 2 ? one! : two!).redeemState(state, browser)),
      );
      t.is(spends.filter(Boolean).length, 1, 'one callback takes the state');
    });
  });

test('the gate defaults off in public mode and once an App acts', (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-app-'));
  const credentials = (app?: { appId: string; privateKey: string; installationId: string | undefined }) =>
    new ForgeCredentials({ apiUrl: forge.url, pat: undefined, app, dataDir });
  const service = (registration: 'on' | 'off' | undefined, publicMode: boolean, app?: any) =>
    new GitHubAppService({
      settings: { registration, credentialStore: 'page', app },
      credentials: credentials(app),
      dataDir,
      publicUrl: null,
      publicMode,
      window: unusedWindow,
    });
  t.true(service(undefined, false).enabled);
  t.false(service(undefined, true).enabled);
  t.true(service('on', true).enabled);
  t.false(service('off', false).enabled);
  t.false(service(undefined, false, { appId: '1', privateKey: forge.app.pem, installationId: '2' }).enabled);
  t.true(service(undefined, false, { appId: '1', privateKey: forge.app.pem, installationId: undefined }).enabled);
});

test('a stored App whose key cannot sign fails its installation as a key problem (the page answers 500)', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-app-'));
  const stored = {
    appId: String(forge.app.id),
    slug: 's',
    privateKey: '-----BEGIN RSA PRIVATE KEY-----\nnope\n-----END RSA PRIVATE KEY-----\n',
  };
  writeFileSync(
    dataPaths.githubApp(dataDir),
    JSON.stringify({ ...stored, clientId: 'c', clientSecret: 'x', htmlUrl: 'https://github.com/apps/s' }),
  );
  const credentials = new ForgeCredentials({ apiUrl: forge.url, pat: undefined, app: undefined, dataDir });
  const service = new GitHubAppService({
    settings: { registration: 'on', credentialStore: 'data-dir', app: undefined },
    credentials,
    dataDir,
    publicUrl: null,
    publicMode: false,
    window: unusedWindow,
  });
  await t.throwsAsync(service.install(String(forge.install('acme'))), { instanceOf: AppKeyError });
});

/** Every file under `dir`, read as text (the run's workspace and sandbox files). */
function everyFile(dir: string): string {
  let text = '';
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name);
    if (entry.isFile() && statSync(path).size < 8 << 20) text += readFileSync(path, 'latin1');
  }
  return text;
}

test.serial(
  'stored: registered, installed, active; a run clones, pushes and opens its PR with scoped tokens',
  async (t) => {
    const svc = await stackWith({ SVC_APP_CRED_STORE: 'data-dir', SVC_FINALIZE_TIMEOUT_MS: '60000' }, true);
    const { browser, page: form } = await operatorBrowser(svc);
    const { state } = formOf(form);
    const back = await browser.open(`/github-app/callback?code=${forge.manifestCode()}&state=${state}`, 'cross-site');
    assertHtml(t, back, 200);
    t.regex(back.text, /Continue in this browser/, "GitHub's redirect comes without the cookie: svc asks to continue");
    t.false(existsSync(dataPaths.githubApp(svc.config.dataDir)), 'nothing stored yet');
    const page = await browser.open(confirmationOf(back)!);
    assertHtml(t, page, 200);
    for (const secret of [forge.app.pem.split('\n')[1]!, forge.app.clientSecret, forge.app.webhookSecret])
      t.false(page.text.includes(secret), 'no secret on the page');
    const file = dataPaths.githubApp(svc.config.dataDir);
    t.is(statSync(file).mode & 0o777, 0o600);
    t.like(JSON.parse(readFileSync(file, 'utf8')), {
      appId: String(forge.app.id),
      privateKey: forge.app.pem,
      installationId: null,
    });
    assertHtml(t, await browser.open('/github-app/register'), 409);

    assertHtml(t, await browser.returnFromGitHub('/github-app/installed'), 200);
    const foreign = await browser.returnFromGitHub('/github-app/installed?installation_id=999');
    assertHtml(t, foreign, 200);
    t.regex(foreign.text, /does not know this installation/);
    const installation = forge.install('acme');
    const installed = await browser.returnFromGitHub(
      `/github-app/installed?installation_id=${installation}&setup_action=install`,
    );
    assertHtml(t, installed, 200);
    t.regex(installed.text, /svc now acts as its App, installed on <b>acme<\/b>/);
    t.is(browser.cookie, undefined, 'the binding ends once the App acts');
    t.is(JSON.parse(readFileSync(file, 'utf8')).installationId, String(installation));
    t.is((await get(svc, '/github-app/register')).status, 404, 'the gate closes once the App acts');
    const identity = await svc.request('GET', '/github-app');
    t.like(identity.body, {
      mode: 'app',
      app: {
        source: 'data-dir',
        appId: String(forge.app.id),
        slug: forge.app.slug,
        installationId: String(installation),
      },
    });

    const project = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/appwork' } }))
      .body.project.id;
    const dispatched = await svc.request('POST', '/runs', {
      body: { agent: 'shell', project, prompt: 'echo two >> src/app.txt\ngit commit -qam "app work"' },
    });
    const runId = dispatched.body.run.id;
    const workspace = dispatched.body.sandbox.workspacePath as string;
    const run = await waitForRunState(svc, runId);
    t.like(run, { state: 'succeeded', prUrl: 'https://github.com/acme/appwork/pull/1', prState: 'open' });
    t.like(forge.pulls[0], { owner: 'acme', name: 'appwork', head: `svc/${runId}` });

    t.true(forge.jwts.length > 0);
    t.deepEqual(
      forge.jwts.filter((check) => !check.ok),
      [],
      'every App JWT verified',
    );
    t.true(forge.issued.length > 0);
    for (const issued of forge.issued) {
      t.deepEqual(issued.repositories, ['appwork'], 'one repository per token');
      t.deepEqual(issued.permissions, RUN_PERMISSIONS, 'only what a run needs');
    }
    const events = (await runEventLines(svc, runId)).join('\n');
    t.true(existsSync(join(workspace, '.git')), 'the workspace is there to look at');
    const runFiles = everyFile(workspace) + everyFile(join(dataPaths.sandboxes(svc.config.dataDir), runId));
    for (const { token } of forge.issued) {
      t.false(events.includes(token), 'no token in the run events');
      t.false(runFiles.includes(token), 'no token in the workspace or sandbox files');
    }
    t.false(runFiles.includes(forge.app.pem.split('\n')[1]!), 'nor the App key');
  },
);
