// The dashboard is served beside the API without shadowing it: the single-page fallback answers
// only browser navigations outside the API's namespaces; every API path, /openapi.json and
// /extensions/* keep their JSON answers, whatever the request accepts.
import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import { startTestStack, type TestStack } from '../support/stack.ts';

const HTML = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
let svc: TestStack;
test.before(async () => {
  svc = await startTestStack({ worker: false });
});
test.after.always(async () => {
  await svc?.stop();
});

const navigate = (path: string, token: string | null = null) =>
  svc.request('GET', path, { token, headers: { accept: HTML } });

test('the install step built the dashboard (web/dist)', (t) => {
  t.true(existsSync('web/dist/index.html'), 'scripts/bootstrap.sh builds web/ into web/dist');
});

test('/ and every /ui/ path answer the app shell, with a strict content security policy', async (t) => {
  for (const path of ['/', '/ui/runs', '/ui/runs/run_abc', '/ui/plan-runs/pr_1', '/ui/anything/deep?x=1']) {
    const page = await navigate(path);
    t.is(page.status, 200, path);
    t.is(page.headers.get('content-type'), 'text/html; charset=utf-8', path);
    t.regex(page.text, /<div id="app"><\/div>/);
    t.regex(page.text, /<script type="module" crossorigin src="\/assets\/index-[\w-]+\.js"><\/script>/);
    const csp = page.headers.get('content-security-policy') ?? '';
    t.regex(csp, /script-src 'self'/);
    t.regex(csp, /frame-ancestors 'none'/);
    t.notRegex(csp, /unsafe-inline|unsafe-eval/);
    t.is(page.headers.get('cache-control'), 'no-cache');
    t.is(page.headers.get('x-content-type-options'), 'nosniff');
  }
});

test('assets are served hashed, immutable and gzipped; a missing one is a JSON 404', async (t) => {
  const shell = await navigate('/');
  const script = /src="(\/assets\/[^"]+\.js)"/.exec(shell.text)![1]!;
  const asset = await svc.request('GET', script, { token: null, headers: { 'accept-encoding': 'gzip' } });
  t.is(asset.status, 200);
  t.is(asset.headers.get('content-type'), 'text/javascript; charset=utf-8');
  t.is(asset.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  t.is(asset.headers.get('content-encoding'), 'gzip');
  t.is(asset.text, readFileSync(`web/dist${script}`, 'utf8'));
  const again = await svc.request('GET', script, {
    token: null,
    headers: { 'if-none-match': asset.headers.get('etag')! },
  });
  t.is(again.status, 304);
  for (const missing of ['/assets/nope.js', '/favicon.ico.map', '/ui/x.js']) {
    const response = await svc.request('GET', missing, { token: null, headers: { accept: HTML } });
    t.is(response.status, 404, missing);
    t.is(response.body?.error?.code, 'not_found', missing);
  }
});

test('API routes, /openapi.json and /extensions/* are never shadowed, even for a browser navigation', async (t) => {
  const runs = await navigate('/runs');
  t.is(runs.status, 401);
  t.is(runs.headers.get('content-type')?.split(';')[0], 'application/json');
  t.is(runs.body.error.code, 'unauthorized');
  const runsAsOperator = await navigate('/runs', svc.token);
  t.is(runsAsOperator.status, 200);
  t.true(Array.isArray(runsAsOperator.body.runs));
  const openapi = await navigate('/openapi.json');
  t.is(openapi.status, 200);
  t.is(openapi.body.openapi, '3.1.0');
  // The judge proxy: not configured here, so an error envelope — never the app shell.
  const judge = await navigate('/extensions/judge/verdicts.jsonl', svc.token);
  t.true([404, 501, 502, 503].includes(judge.status), String(judge.status));
  t.is(judge.headers.get('content-type')?.split(';')[0], 'application/json');
  t.truthy(judge.body.error.code);
  for (const path of ['/extensions/other', '/runs/run_x/unknown', '/plan-runs/x/y/z', '/p/run_1/', '/agents/a/b']) {
    const response = await navigate(path, svc.token);
    t.is(response.status, 404, path);
    t.is(response.body?.error?.code, 'not_found', path);
  }
});

test('outside a navigation the API answers as before: JSON 404s and 405s', async (t) => {
  const json = await svc.request('GET', '/ui/runs', { token: null, headers: { accept: 'application/json' } });
  t.is(json.status, 404);
  t.is(json.body.error.code, 'not_found');
  const curl = await svc.request('GET', '/', { token: null, headers: { accept: '*/*' } });
  t.is(curl.status, 404);
  const post = await svc.request('POST', '/ui/runs', { token: null, headers: { accept: HTML }, body: {} });
  t.is(post.status, 404);
  t.is(post.body.error.code, 'not_found');
});
