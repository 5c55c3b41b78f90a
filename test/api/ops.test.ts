// The operations surface against a live public-mode stack: GET /instance, /ops/overview,
// /metrics (svc's own metrics, the worker's, and the Temporal SDK's) and the one-time /setup.
import test from 'ava';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { freePort } from '../support/free-port.ts';
import { startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

const github = new GitHubStandIn();
github.createRepo('acme', 'shown');
github.createRepo('other', 'hidden');

let svc: TestStack;
let temporalMetrics: string;
const runs: Record<string, string> = {};
test.before(async () => {
  temporalMetrics = `127.0.0.1:${await freePort()}`;
  svc = await startTestStack({
    env: {
      SVC_AUTH: 'public',
      SVC_PUBLIC_ALLOWLIST: 'acme',
      SVC_INSTANCE_NAME: 'night-shift',
      SVC_PUBLIC_URL: 'https://svc.example.test/',
      SVC_TEMPORAL_METRICS_ADDRESS: temporalMetrics,
    },
  });
  const project = async (name: string) =>
    (await svc.request('POST', '/projects', { body: { gitUrl: `https://github.com/${name}` } })).body.project.id;
  const shown = await project('acme/shown');
  const hidden = await project('other/hidden');
  const dispatch = async (body: Record<string, unknown>) => (await svc.request('POST', '/runs', { body })).body.run.id;
  runs.ok = await dispatch({ agent: 'shell', project: shown, prompt: 'echo fine' });
  runs.failed = await dispatch({ agent: 'shell', project: shown, prompt: 'exit 3' });
  runs.hidden = await dispatch({ agent: 'shell', project: hidden, prompt: 'echo hidden' });
  for (const id of Object.values(runs)) await waitForRunState(svc, id);
});
test.after.always(() => svc?.stop());

test('GET /instance: operators see everything, spectators the first five fields', async (t) => {
  const operator = await svc.request('GET', '/instance');
  t.is(operator.status, 200);
  t.like(operator.body, {
    name: 'night-shift',
    publicUrl: 'https://svc.example.test',
    runtime: 'local',
    authMode: 'public',
    dbBackend: svc.config.databaseUrl.startsWith('postgres') ? 'postgresql' : 'sqlite',
    admission: null,
  });
  t.true(Number.isInteger(operator.body.uptimeSeconds) && operator.body.uptimeSeconds >= 0);
  const spectator = await svc.request('GET', '/instance', { token: null });
  t.deepEqual(Object.keys(spectator.body).sort(), ['authMode', 'name', 'publicUrl', 'runtime', 'version']);
});

test('GET /ops/overview counts the window; spectators see visible projects only and no USD', async (t) => {
  const operator = (await svc.request('GET', '/ops/overview?window=7d')).body;
  t.is(operator.window, '7d');
  t.like(operator.runs, { total: 3, nonTerminal: 0, byState: { succeeded: 2, failed: 1, queued: 0, running: 0 } });
  t.like(operator.spend, { windowRuns: 3 });
  t.is(typeof operator.spend.costUsd, 'number');
  t.like(operator.services, { runtime: 'local', dbReachable: true, temporalReachable: true });
  const spectator = (await svc.request('GET', '/ops/overview', { token: null })).body;
  t.is(spectator.window, '24h', 'the default window');
  t.like(spectator.runs, { total: 2, byState: { succeeded: 1, failed: 1 } });
  t.false('costUsd' in spectator.spend);
  const bad = await svc.request('GET', '/ops/overview?window=1y');
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'validation_error');
});

test("GET /metrics: the read model's gauges, the API's and the worker's histograms, the Temporal SDK's", async (t) => {
  t.is((await svc.request('GET', '/metrics', { token: null })).status, 401, 'operators only');
  const response = await svc.request('GET', '/metrics');
  t.is(response.status, 200);
  t.regex(response.headers.get('content-type') ?? '', /^text\/plain/);
  const text = response.text;
  t.regex(text, /^svc_runs\{state="succeeded"\} 2$/m);
  t.regex(text, /^svc_runs\{state="failed"\} 1$/m);
  t.regex(text, /^svc_live_streams\{kind="lifecycle"\} 0$/m);
  const count = (pattern: RegExp) => Number(text.match(pattern)?.[1] ?? 0);
  t.true(count(/^svc_dispatch_seconds_count\{kind="run"\} (\d+)$/m) >= 3, 'dispatch latency');
  t.true(count(/^svc_run_duration_seconds_count\{state="succeeded"\} (\d+)$/m) >= 2, 'run duration');
  t.true(count(/^svc_run_queue_wait_seconds_count (\d+)$/m) >= 3, 'queue wait');
  t.true(count(/^svc_run_failures_total\{reason="[a-z_]+"\} (\d+)$/m) >= 1, 'failure reasons');
  t.true(count(/^svc_sandbox_ready_seconds_count (\d+)$/m) >= 3, 'sandbox ready');
  t.true(count(/^svc_agent_first_output_seconds_count (\d+)$/m) >= 2, 'first agent output (two runs print)');
  t.true(count(/^svc_run_finalize_seconds_count (\d+)$/m) >= 2, 'finalize of the project runs that ended well');
  t.regex(text, /^svc_http_request_seconds_count\{method="post",route="\/runs",status="201"\} \d+$/m);
  t.regex(text, /^nodejs_heap_size_used_bytes \d+/m, 'the process');
  t.regex(text, /^temporal_\w+/m, 'the Temporal SDK (worker slots, pollers, caches)');
});

test('GET /setup: the armed code signs one browser in, once; anything else is refused', async (t) => {
  const link = new URL((await svc.stack.setupLink())!);
  t.is(link.origin, 'https://svc.example.test', 'the link uses the public URL');
  const wrong = await svc.request('GET', '/setup?code=not-the-code', { token: null });
  t.is(wrong.status, 400);
  t.regex(wrong.headers.get('content-type') ?? '', /^text\/html/);
  t.false(wrong.text.includes(svc.token), 'a wrong code shows no token');
  const page = await svc.request('GET', `/setup${link.search}`, { token: null });
  t.is(page.status, 200);
  t.true(page.text.includes(`localStorage.setItem('svc.apiToken', "${svc.token}")`));
  const nonce = page.text.match(/<script nonce="([^"]+)">/)?.[1];
  t.truthy(nonce);
  t.is(
    page.headers.get('content-security-policy'),
    `default-src 'none'; script-src 'nonce-${nonce}'; frame-ancestors 'none'`,
  );
  t.is(page.headers.get('cache-control'), 'no-store');
  t.is(page.headers.get('referrer-policy'), 'no-referrer');
  const again = await svc.request('GET', `/setup${link.search}`, { token: null });
  t.is(again.status, 404, 'spent: nothing is armed any more');
  t.is(again.body.error.code, 'not_found');
  const crossSite = await svc.request('GET', `/setup${new URL((await svc.stack.setupLink())!).search}`, {
    token: null,
    headers: { 'sec-fetch-site': 'cross-site' },
  });
  t.is(crossSite.status, 403, 'another site cannot spend the code');
});
