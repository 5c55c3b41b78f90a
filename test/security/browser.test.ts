// Attack: a web page the operator visits drives svc through the browser. It cannot send a JSON
// body cross-origin without a CORS preflight, so svc takes bodies only as application/json; a
// state-changing request from another Origin is refused in every mode; and a Host svc is not
// reached at (DNS rebinding) is refused outright (test/security/dns-rebinding.test.ts for the
// other modes). Nothing is dispatched by any of it.
import test from 'ava';
import { rawRequest } from '../support/raw-request.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

let open: TestStack;
let tokened: TestStack;
test.before(async () => {
  open = await startTestStack({ noAuth: true, worker: false });
  tokened = await startTestStack({ worker: false });
});
test.after.always(async () => {
  await open?.stop();
  await tokened?.stop();
});

/** A raw request, as a browser would shape it: any Host, Origin and Content-Type, or none. */
const raw = rawRequest;

const dispatch = JSON.stringify({ agent: 'shell', prompt: 'echo pwned' });
const runCount = async (svc: TestStack) => (await svc.request('GET', '/runs')).body.runs.length as number;

test.serial(
  'a body without Content-Type: application/json is refused (415), also with no Content-Type at all',
  async (t) => {
    const host = new URL(open.url).host;
    for (const type of [
      undefined,
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
    ]) {
      const response = await raw(
        open.url,
        'POST',
        '/runs',
        { host, ...(type ? { 'content-type': type } : {}) },
        dispatch,
      );
      t.is(response.status, 415, `Content-Type ${type}`);
      t.is(response.body.error.code, 'unsupported_media_type');
    }
    t.is(
      (await raw(open.url, 'POST', '/runs', { host })).status,
      415,
      'a route whose body is required wants the header even without a body',
    );
    t.is(await runCount(open), 0, 'nothing was dispatched');
  },
);

test.serial('a state-changing request from another origin is refused in every auth mode', async (t) => {
  for (const [svc, auth] of [
    [open, {}],
    [tokened, { authorization: `Bearer ${tokened.token}` }],
  ] as const) {
    const host = new URL(svc.url).host;
    for (const origin of ['https://evil.example', 'null', `http://${host}.evil.example`]) {
      const response = await raw(
        svc.url,
        'POST',
        '/runs',
        { host, origin, 'content-type': 'application/json', ...auth },
        dispatch,
      );
      t.is(response.status, 403, origin);
      t.is(response.body.error.code, 'origin_forbidden');
    }
    const same = await raw(
      svc.url,
      'POST',
      '/runs',
      { host, origin: `http://${host}`, 'content-type': 'application/json', ...auth },
      JSON.stringify({ agent: 'nope', prompt: 'x' }),
    );
    t.is(same.status, 404, "svc's own origin gets through (to the agent lookup)");
    t.is(
      (await raw(svc.url, 'GET', '/runs', { host, origin: 'https://evil.example', ...auth })).status,
      200,
      'reads carry no state change',
    );
    // An <img> or a form sends no Origin, but a browser still says where the request comes from.
    const imgPost = await raw(svc.url, 'POST', '/runs/run_000000000000/cancel', {
      host,
      'sec-fetch-site': 'cross-site',
      ...auth,
    });
    t.is(imgPost.status, 403);
    t.is(imgPost.body.error.code, 'origin_forbidden');
    // The inbox claims messages on a GET: another site cannot drain it either.
    for (const headers of [{ origin: 'https://evil.example' }, { 'sec-fetch-site': 'cross-site' }] as Record<
      string,
      string
    >[]) {
      t.is(
        (await raw(svc.url, 'GET', '/runs/run_000000000000/inbox', { host, ...headers, ...auth })).status,
        403,
        JSON.stringify(headers),
      );
    }
    t.is(
      (await raw(svc.url, 'GET', '/runs/run_000000000000/inbox', { host, 'sec-fetch-site': 'same-origin', ...auth }))
        .status,
      404,
      'its own pages get through (to the run lookup)',
    );
  }
  t.is(await runCount(open), 0);
});

test.serial('with --no-auth, a Host svc is not reached at is refused for every request (DNS rebinding)', async (t) => {
  for (const host of ['evil.example', 'evil.example:8080', 'localhost.evil.example', '127.0.0.1.evil.example']) {
    for (const [method, path] of [
      ['GET', '/runs'],
      ['GET', '/whoami'],
      ['POST', '/runs'],
    ]) {
      const response = await raw(
        open.url,
        method!,
        path!,
        { host, 'content-type': 'application/json' },
        method === 'POST' ? dispatch : undefined,
      );
      t.is(response.status, 421, `${method} ${path} Host: ${host}`);
      t.is(response.body.error.code, 'misdirected_request');
    }
  }
  const port = new URL(open.url).port;
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`])
    t.is((await raw(open.url, 'GET', '/whoami', { host })).status, 200, host);
  t.is(await runCount(open), 0);
  t.is(
    (await raw(tokened.url, 'GET', '/healthz', { host: 'evil.example' })).status,
    200,
    'the health check answers any Host: it reveals nothing',
  );
});
