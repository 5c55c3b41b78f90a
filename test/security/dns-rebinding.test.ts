// Attack: a hostile domain re-pointed at svc's address (DNS rebinding). A page of that domain is
// same-origin with itself, so a browser lets it read what svc answers under that name: the
// anonymous pages (the GitHub App's registration), public reads, and with a token whatever it
// is shown. In every auth mode svc answers only to the names it is reached at (421 otherwise),
// except on the health checks, which reveal nothing and which probes reach by the pod's address.
import test from 'ava';
import { rawRequest } from '../support/raw-request.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

let tokened: TestStack;
let spectated: TestStack;
test.before(async () => {
  tokened = await startTestStack({
    worker: false,
    env: {
      SVC_GITHUB_APP_REGISTRATION: 'on',
      SVC_PUBLIC_URL: 'https://svc.example.test/',
      SVC_ALLOWED_HOSTS: 'svc.internal, Svc-Api',
    },
  });
  spectated = await startTestStack({
    worker: false,
    env: { SVC_AUTH: 'public', SVC_PUBLIC_ALLOWLIST: 'acme' },
  });
});
test.after.always(async () => {
  await tokened?.stop();
  await spectated?.stop();
});

const REBOUND = [
  'evil.example',
  'evil.example:8080',
  'svc.example.test.evil.example',
  'localhost.evil.example',
  '127.0.0.1.evil.example',
  'svc.internal.evil.example',
  'internal',
];

test('a rebound name gets 421 misdirected_request on anonymous pages and authenticated routes alike', async (t) => {
  const bearer = { authorization: `Bearer ${tokened.token}` };
  for (const host of REBOUND) {
    for (const [path, headers] of [
      ['/github-app/register', {}],
      ['/github-app/callback?code=x&state=y', {}],
      ['/version', {}],
      ['/openapi.json', {}],
      ['/runs', bearer],
      ['/whoami', bearer],
      ['/ui/runs', { accept: 'text/html' }],
    ] as const) {
      const response = await rawRequest(tokened.url, 'GET', path, { host, ...headers });
      t.is(response.status, 421, `${path} Host: ${host}`);
      t.is(response.body.error.code, 'misdirected_request', `${path} Host: ${host}`);
      t.regex(response.body.error.hint, /SVC_ALLOWED_HOSTS/);
    }
  }
  // A state-changing request is refused before it is read: nothing is dispatched.
  const dispatched = await rawRequest(
    tokened.url,
    'POST',
    '/runs',
    { host: 'evil.example', 'content-type': 'application/json', ...bearer },
    JSON.stringify({ agent: 'shell', prompt: 'echo rebound' }),
  );
  t.is(dispatched.status, 421);
  t.is((await tokened.request('GET', '/runs')).body.runs.length, 0);
});

test('public mode: a rebound name reads nothing a spectator could', async (t) => {
  for (const path of ['/runs', '/projects', '/whoami']) {
    const response = await rawRequest(spectated.url, 'GET', path, { host: 'evil.example' });
    t.is(response.status, 421, path);
    t.is((await rawRequest(spectated.url, 'GET', path, { host: new URL(spectated.url).host })).status, 200, path);
  }
});

test('the names svc is reached at, loopback names and addresses are answered', async (t) => {
  const port = new URL(tokened.url).port;
  const bearer = { authorization: `Bearer ${tokened.token}` };
  for (const host of [
    `127.0.0.1:${port}`,
    `localhost:${port}`,
    `[::1]:${port}`,
    'svc.example.test',
    'SVC.example.test:443',
    'svc.example.test.',
    'svc.internal:8080',
    'svc-api',
    // An address cannot be re-pointed: a page is served from it only by whoever holds it.
    '10.1.2.3:8080',
    '[fd00::1]:8080',
  ]) {
    const response = await rawRequest(tokened.url, 'GET', '/whoami', { host, ...bearer });
    t.is(response.status, 200, host);
    t.is(response.body.identity, 'operator', host);
  }
});

test('the health checks answer any Host: Kubernetes probes name the pod, and they reveal nothing', async (t) => {
  for (const host of ['evil.example', '10.244.1.7:8080', 'svc-api.svc.svc.cluster.local']) {
    t.is((await rawRequest(tokened.url, 'GET', '/healthz', { host })).status, 200, host);
    t.not((await rawRequest(tokened.url, 'GET', '/readyz', { host })).status, 421, host);
  }
});
