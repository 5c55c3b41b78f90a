// `svc login`: a fresh one-time dashboard sign-in link from the running API (a spent one replaced
// without a restart), the client config saved for the operator only, and no link for anyone else.
import test from 'ava';
import { mkdtempSync, readFileSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mintRunToken } from '../../core/run-token.ts';
import { svcCli } from '../support/cli.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

let svc: TestStack;
test.before(async () => {
  svc = await startTestStack({ worker: false });
});
test.after.always(() => svc?.stop());

const link = (stdout: string) => /^sign in a browser \(open once, within 10 minutes\): (\S+)$/m.exec(stdout)?.[1];

/** What a browser gets from a sign-in link: the page that stores the token, or the refusal. */
const open = (url: string) => fetch(url);

test.serial(
  'svc login prints a link that signs a browser in once, and a new login replaces a spent link',
  async (t) => {
    const home = mkdtempSync(join(tmpdir(), 'svc-login-'));
    const config = join(home, 'nested', 'client.json');
    const env = { SVC_CLIENT_CONFIG: config, SVC_DATA_DIR: svc.config.dataDir };

    const login = await svcCli(['login', '--url', svc.url], env);
    t.is(login.code, 0, login.stderr);
    t.regex(login.stdout, new RegExp(`^logged in to ${svc.url} \\(saved to ${config}\\)$`, 'm'));
    const first = link(login.stdout)!;
    t.true(first.startsWith(`${svc.url}/setup?code=`), login.stdout);
    t.is(statSync(config).mode & 0o777, 0o600, 'the token is readable by its owner only');
    t.deepEqual(JSON.parse(readFileSync(config, 'utf8')), { url: svc.url, token: svc.token });

    const page = await open(first);
    t.is(page.status, 200);
    t.true((await page.text()).includes(`localStorage.setItem('svc.apiToken', ${JSON.stringify(svc.token)})`));
    const spent = await open(first);
    t.is(spent.status, 404, 'a link signs in once');
    t.like(await spent.json(), { error: { code: 'not_found', hint: 'run `svc login` for a fresh sign-in link' } });

    // The same server, not restarted: a new link works, and it replaces any earlier one.
    const json = await svcCli(['login', '--output', 'json'], env);
    t.is(json.code, 0, json.stderr);
    const answer = JSON.parse(json.stdout);
    t.like(answer, { url: svc.url, config });
    t.true(Date.parse(answer.expiresAt) > Date.now());
    const unused = link((await svcCli(['login'], env)).stdout)!;
    t.is((await open(answer.signInLink)).status, 400, 'replaced by the newer link');
    t.is((await open(unused)).status, 200);

    // Later commands find the server and the token in the saved config.
    const listed = await svcCli(['runs', 'list', '--output', 'json'], { SVC_CLIENT_CONFIG: config });
    t.is(listed.code, 0, listed.stderr);
    t.deepEqual(JSON.parse(listed.stdout), []);
  },
);

test.serial('svc login refuses without the operator token, and saves nothing', async (t) => {
  const config = join(mkdtempSync(join(tmpdir(), 'svc-login-')), 'client.json');
  const wrong = await svcCli(['login', '--url', svc.url, '--token', 'not-the-token'], { SVC_CLIENT_CONFIG: config });
  t.is(wrong.code, 4);
  t.regex(wrong.stderr, /^svc: \[unauthorized\] invalid bearer token$/m);
  t.false(existsSync(config));

  const none = await svcCli(['login', '--url', svc.url, '--data-dir', join(tmpdir(), 'no-such-svc-data')], {
    SVC_CLIENT_CONFIG: config,
  });
  t.is(none.code, 2);
  t.regex(none.stderr, /no operator token/);
  t.false(existsSync(config));

  // A run's own token (what a sandbox holds) cannot mint a sign-in for the operator's dashboard.
  const asRun = await svc.request('POST', '/setup-codes', { token: mintRunToken(svc.token, 'run_000000000000') });
  t.true([401, 403].includes(asRun.status), `${asRun.status}`);
  t.is((await svc.request('POST', '/setup-codes', { token: null })).status, 401);
});
