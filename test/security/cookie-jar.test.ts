// Attack: fill the browser's cookie jar for svc's host. Cookies are per host, not per port, so a
// preview (path mode: the dashboard's host, the proxy's port) can set many; the browser then sends
// them all to the API. A request head past Node's 16 KiB default would be refused 431 and lock the
// dashboard out; and svc's own cookie must still be found among the rest, decoys of its name
// included.
import test from 'ava';
import { operatorBrowser } from '../support/registration-browser.ts';
import { rawRequest } from '../support/raw-request.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

let svc: TestStack;
test.before(async () => {
  svc = await startTestStack({
    worker: false,
    env: { SVC_GITHUB_APP_REGISTRATION: 'on', SVC_PUBLIC_URL: 'http://svc.example.test' },
  });
});
test.after.always(() => svc?.stop());

/** `count` cookies a preview could have set, ~60 bytes each. */
const flood = (count: number) =>
  Array.from({ length: count }, (_, index) => `preview_${index}=${'x'.repeat(48)}`).join('; ');

test('an 18 KB Cookie header is read, not refused 431', async (t) => {
  const cookie = flood(320);
  t.true(cookie.length >= 18 * 1024, String(cookie.length));
  const host = new URL(svc.url).host;
  const response = await rawRequest(svc.url, 'GET', '/whoami', {
    host,
    cookie,
    authorization: `Bearer ${svc.token}`,
  });
  t.is(response.status, 200);
  t.is(response.body.identity, 'operator');
});

test("svc's own cookie is found among many, behind a decoy of its name", async (t) => {
  const { browser, page } = await operatorBrowser(svc);
  t.is(page.status, 200);
  const bound = browser.cookie!;
  t.truthy(bound);
  const cookie = `${flood(150)}; svc_github_app=decoy; ${flood(150)}; svc_github_app=${bound}; theme=dark`;
  const host = new URL(svc.url).host;
  const form = await rawRequest(svc.url, 'GET', '/github-app/register', {
    host,
    cookie,
    'sec-fetch-site': 'same-origin',
  });
  t.is(form.status, 200, String(form.body).slice(0, 300));
  t.regex(String(form.body), /name="manifest"/);
  // Without the bound value, the decoy and the flood open nothing.
  const refused = await rawRequest(svc.url, 'GET', '/github-app/register', {
    host,
    cookie: `${flood(300)}; svc_github_app=decoy`,
  });
  t.is(refused.status, 403);
});
