// The auth model, route by route: every route of the OpenAPI document × {no token, bad token,
// another run's token, the run's own token, operator, spectator} against a live public-mode
// server, plus what spectators see (redacted, allowlisted, never a held stream) and token mode.
import test from 'ava';
import { mintRunToken } from '../../core/run-token.ts';
import { suitePostgresUrl } from '../support/env.ts';
import { waitFor } from '../support/processes.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { runEventLines, startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

const github = new GitHubStandIn();
github.createRepo('acme', 'visible');
github.createRepo('other', 'hidden');
const SECRET = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789';

let svc: TestStack;
let visible: string;
let hidden: string;
let runA: string;
let runB: string;
let hiddenRun: string;
test.before(async () => {
  // The public-mode matrix on PostgreSQL (SQLite when there is none; never in CI), the token-mode
  // checks below on SQLite: both read models answer the auth questions.
  svc = await startTestStack({
    database: suitePostgresUrl() ? 'postgresql' : 'sqlite',
    env: { SVC_AUTH: 'public', SVC_PUBLIC_ALLOWLIST: 'acme' },
  });
  visible = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/visible' } })).body
    .project.id;
  hidden = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/other/hidden' } })).body
    .project.id;
  runA = (
    await svc.request('POST', '/runs', {
      body: {
        agent: 'shell',
        project: visible,
        prompt:
          `echo token=${SECRET}\necho key=${SECRET} > leak.txt && git add leak.txt && git commit -qm ` +
          `leak\nsleep 300`,
        metadata: { ticket: 'INTERNAL-7' },
      },
    })
  ).body.run.id;
  runB = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'sleep 300' } })).body.run.id;
  hiddenRun = (await svc.request('POST', '/runs', { body: { agent: 'shell', project: hidden, prompt: 'echo hidden' } }))
    .body.run.id;
  await waitForRunState(svc, runA, ['running']);
  await waitForRunState(svc, runB, ['running']);
  await waitForRunState(svc, hiddenRun);
});
test.after.always(() => svc?.stop());

type Caller = 'none' | 'bad' | 'otherRun' | 'ownRun' | 'operator';
const denied = (status: number) => status === 401 || status === 403;

test.serial('every route × every caller answers as its declared policy says', async (t) => {
  const document = (await svc.request('GET', '/openapi.json', { token: null })).body;
  const tokens: Record<Caller, string | null> = {
    none: null,
    bad: 'not-a-valid-token',
    otherRun: mintRunToken(svc.token, runB),
    ownRun: mintRunToken(svc.token, runA),
    operator: svc.token,
  };
  const callbacks = new Set<string>();
  let checked = 0;
  for (const [template, operations] of Object.entries(document.paths) as [string, Record<string, any>][]) {
    for (const [method, operation] of Object.entries(operations)) {
      if (template === '/events/stream') continue; // held open; its auth is checked below with follow=0
      const auth: string = operation.description;
      const anonymous = operation.security.length === 0;
      const publicRead = auth.includes('public mode');
      const runCallback = auth.includes("the run's own per-run token");
      const anyRun = auth.includes("any live run's per-run token");
      if (runCallback) callbacks.add(`${method} ${template}`);
      // Mutations by the operator go to ids that do not exist, so the matrix changes nothing.
      const decoy = method !== 'get';
      const path = (caller: Caller) =>
        template
          .replace(
            '{id}',
            template.startsWith('/runs')
              ? caller === 'operator' && decoy && !runCallback
                ? 'run_000000000000'
                : runA
              : template.startsWith('/projects')
                ? decoy && caller === 'operator'
                  ? 'prj_000000000000'
                  : visible
                : 'plnr_000000000000',
          )
          .replace('{seedId}', 'x-1')
          .replace('{triggerId}', 'nightly')
          .replace('{name}', 'shell') + (template.endsWith('/events') ? '?follow=0' : '');
      const expect: Record<Caller, 'allowed' | 401 | 403> = anonymous
        ? { none: 'allowed', bad: 'allowed', otherRun: 'allowed', ownRun: 'allowed', operator: 'allowed' }
        : {
            none: publicRead ? 'allowed' : 401,
            bad: 401,
            otherRun: anyRun ? 'allowed' : 403,
            ownRun: runCallback || anyRun ? 'allowed' : 403,
            operator: 'allowed',
          };
      for (const caller of Object.keys(tokens) as Caller[]) {
        if (runCallback && caller === 'operator' && method === 'post') continue; // would act on run A
        const response = await svc.request(method.toUpperCase(), path(caller), {
          token: tokens[caller],
          ...(method === 'get' || method === 'delete' ? {} : { body: {} }),
        });
        const want = expect[caller];
        if (want === 'allowed')
          t.false(
            denied(response.status),
            `${caller} ${method} ${template} → ${response.status} ${response.text.slice(0, 200)}`,
          );
        else t.is(response.status, want, `${caller} ${method} ${template}`);
        if (denied(response.status))
          t.truthy(response.body?.error?.code, `${caller} ${method} ${template}: the envelope`);
        checked += 1;
      }
    }
  }
  t.true(checked > 150, `${checked} checks`);
  t.deepEqual([...callbacks].sort(), [
    'get /runs/{id}/finalize-intent',
    'get /runs/{id}/inbox',
    'post /runs/{id}/finalize-result',
    'post /runs/{id}/git-credential',
    'post /runs/{id}/salvage',
  ]);
  const stream = await svc.request('GET', '/events/stream?follow=0', { token: null });
  t.is(stream.status, 401, 'spectators hold no lifecycle stream');
  t.is((await svc.request('GET', '/events/stream?follow=0', { token: tokens.ownRun })).status, 403);
});

test.serial('spectators see allowlisted projects only, redacted, with secrets masked and no held stream', async (t) => {
  const spectator = { token: null };
  const projects = (await svc.request('GET', '/projects', spectator)).body.projects;
  t.deepEqual(
    projects.map((project: { id: string }) => project.id),
    [visible],
  );
  t.false('localPath' in projects[0]);
  t.is((await svc.request('GET', `/projects/${hidden}`, spectator)).status, 404);
  const runs = (await svc.request('GET', '/runs', spectator)).body;
  t.deepEqual(
    runs.runs.map((run: { id: string }) => run.id),
    [runA],
  );
  t.is(runs.costTotalUsd, null);
  t.is(runs.runs[0].renderedAgentJson, null);
  t.is(runs.runs[0].metadata, null, "the dispatcher's labels are the operator's");
  t.deepEqual((await svc.request('GET', `/runs/${runA}`)).body.run.metadata, { ticket: 'INTERNAL-7' });
  t.is((await svc.request('GET', `/runs/${runA}`, spectator)).body.run.metadata, null);
  t.is((await svc.request('GET', `/runs/${hiddenRun}`, spectator)).status, 404);
  t.is(
    (await svc.request('GET', `/runs/${runB}`, spectator)).status,
    404,
    'a run without a project is no spectator business',
  );
  // Run A is still running: an operator would follow it; a spectator gets the page and the end.
  const started = Date.now();
  const events = await svc.request('GET', `/runs/${runA}/events`, spectator);
  t.true(Date.now() - started < 5000);
  t.true(events.text.includes('token=[redacted]'), events.text);
  t.false(events.text.includes(SECRET));
  const operatorView = (await runEventLines(svc, runA)).join('\n');
  t.true(operatorView.includes(SECRET), 'the operator sees the log as written');
  // The text log is the same log: masked alike for a spectator, whole for the operator.
  const spectatorLog = await svc.request('GET', `/runs/${runA}/log`, spectator);
  t.is(spectatorLog.status, 200);
  t.regex(spectatorLog.text, /Z out {3}token=\[redacted\]\n/);
  t.false(spectatorLog.text.includes(SECRET));
  t.true((await svc.request('GET', `/runs/${runA}/log`)).text.includes(`token=${SECRET}`));
  t.is((await svc.request('GET', `/runs/${hiddenRun}/log`, spectator)).status, 404);
  // The running run's diff: the same rules as the run, its text masked.
  const diffOf = (options: { token?: string | null }) =>
    waitFor(async () => {
      const response = await svc.request('GET', `/runs/${runA}/diff`, options);
      return response.status === 200 ? response : undefined;
    }, "run A's diff");
  const seen = await diffOf(spectator);
  t.is(seen.body.files[0].path, 'leak.txt');
  t.false(seen.text.includes(SECRET), seen.text);
  t.true((await diffOf({})).text.includes(SECRET), 'the operator sees the change as committed');
  t.is((await svc.request('GET', `/runs/${hiddenRun}/diff`, spectator)).status, 404);
  t.is((await svc.request('GET', `/runs/${runB}/diff`, spectator)).status, 404);
  const agent = (await svc.request('GET', '/agents/shell', spectator)).body;
  t.is(agent.renderedJson, null);
  t.deepEqual((await svc.request('GET', '/whoami', spectator)).body, {
    identity: 'anonymous',
    capabilities: ['readPublic'],
  });
  t.deepEqual((await svc.request('GET', '/whoami')).body.identity, 'operator');
});

test.serial("a run's token stops working when the run ends", async (t) => {
  const own = mintRunToken(svc.token, runA);
  t.is((await svc.request('GET', `/runs/${runA}/inbox?peek=1`, { token: own })).status, 200);
  await svc.request('POST', `/runs/${runA}/cancel`, { body: {} });
  await svc.request('POST', `/runs/${runB}/cancel`, { body: {} });
  t.is((await svc.request('GET', `/runs/${runA}/inbox?peek=1`, { token: own })).status, 401);
});

test.serial(
  'token mode: no credential is 401 everywhere but the anonymous routes; a token in the query string is never read',
  async (t) => {
    const strict = await startTestStack({ worker: false });
    t.teardown(() => strict.stop());
    // Every documented route, with no credential: only the anonymous ones answer.
    const document = (await strict.request('GET', '/openapi.json', { token: null })).body;
    for (const [template, operations] of Object.entries(document.paths) as [string, Record<string, any>][]) {
      for (const [method, operation] of Object.entries(operations)) {
        const path = template.replace(/\{[A-Za-z]+\}/g, 'x-1') + (template === '/events/stream' ? '?follow=0' : '');
        const response = await strict.request(method.toUpperCase(), path, {
          token: null,
          ...(method === 'get' || method === 'delete' ? {} : { body: {} }),
        });
        // The App registration pages answer a browser the operator did not bind with a 403 page of their
        // own (test/security/github-app-registration.test.ts), not for want of a token.
        const unboundBrowser =
          template.startsWith('/github-app/') && /^text\/html/.test(response.headers.get('content-type') ?? '');
        if (operation.security.length === 0)
          t.false(denied(response.status) && !unboundBrowser, `${method} ${template}`);
        else t.is(response.status, 401, `${method} ${template}`);
      }
    }
    for (const name of ['token', 'access_token', 'api_token']) {
      t.is((await strict.request('GET', `/runs?${name}=${strict.token}`, { token: null })).status, 401, name);
    }
  },
);
