// Previews, end to end on the default backend: a project whose `.svc/preview.yaml` runs a small
// real HTTP server (with a WebSocket); a run commits and opens its PR; its preview starts in a
// sandbox on the run's workspace and goes live; svc's proxy lets in only a browser holding that
// run's cookie (set by POST /runs/{id}/preview/login), HTTP and WebSocket, without svc's cookies
// reaching the preview; teardown frees the port; an idle preview is evicted by its workflow timer;
// one orphaned by its workflow's termination is failed and stopped by the reconciler.
import test from 'ava';
import { Client, Connection } from '@temporalio/client';
import { connect } from 'node:net';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { waitFor } from '../support/processes.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { runEvents, startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';
import { reconcilerScheduleId } from '../../worker/reconciler-schedule.ts';
import { pullRequestWorkflowId } from '../../core/run-workflows.ts';

/**
 * The project's preview: `page.txt` of the workspace, the request's cookies, and a WebSocket that greets and echoes.
 */
const SERVER = `
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
const server = createServer((request, response) => {
  if (request.url === '/health') return response.end('ok');
  if (request.url === '/cookies') return response.end('cookies: ' + (request.headers.cookie ?? ''));
  if (request.url === '/odd-status') return response.socket.end('HTTP/1.1 099 Odd\\r\\ncontent-length: 0\\r\\n\\r\\n');
  if (request.url === '/worker') response.setHeader('service-worker-allowed', '/');
  response.setHeader('set-cookie', [
    'app=1; Path=/',
    'svc_preview_run_000000000000=forged; Path=/',
    '=svc_preview_x=1',
    'login=abc; Domain=127.0.0.1; Path=/api; HttpOnly; SameSite=Lax',
  ]);
  response.setHeader('clear-site-data', '"cookies", "storage"');
  response.end('page: ' + readFileSync('page.txt', 'utf8').trim() + ' at ' + request.url);
});
server.on('upgrade', (request, socket) => {
  const accept = createHash('sha1')
    .update(request.headers['sec-websocket-key'] + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11')
    .digest('base64');
  socket.write('HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: ' +
    'Upgrade\\r\\nSec-WebSocket-Accept: ' + accept + '\\r\\nSet-Cookie: ws=1; Path=/\\r\\n' +
    'Clear-Site-Data: "*"\\r\\n\\r\\n');
  socket.write(Buffer.from([0x81, 5, ...Buffer.from('hello')]));
  socket.on('data', (data) => socket.write(data));
});
server.listen(Number(process.env.PORT), process.env.HOST);
`;

const previewYaml = (extra = '') =>
  `preview:\n  type: server\n  command: node server.mjs\n  port: 4173\n  readiness_path: /health\n${extra}`;

const github = new GitHubStandIn();
const forge = new PullRequestsStandIn();
let svc: TestStack;
let previewOrigin: string;

test.before(async () => {
  await forge.start();
  svc = await startTestStack({ env: { SVC_GIT_TOKEN: 'ghp_test', SVC_GITHUB_API_URL: forge.url } });
  previewOrigin = svc.stack.api!.previewUrl;
});
test.after.always(async () => {
  await svc?.stop();
  await forge.stop();
});

async function projectWithPreview(name: string, yaml: string): Promise<string> {
  github.createRepo('acme', name, {
    files: { '.svc/preview.yaml': yaml, 'server.mjs': SERVER, 'page.txt': 'before\n' },
  });
  return (await svc.request('POST', '/projects', { body: { gitUrl: `https://github.com/acme/${name}` } })).body.project
    .id;
}

/** A run that changes the page and opens its PR; answers once its preview left `starting`. */
async function runWithPreview(project: string, page: string) {
  const prompt = `printf '${page}\\n' > page.txt && git add -A && git commit -qm 'change the page'`;
  const { body } = await svc.request('POST', '/runs', { body: { agent: 'shell', project, prompt } });
  const run = await waitForRunState(svc, body.run.id, undefined, 60_000);
  return waitFor(
    async () => {
      const current = (await svc.request('GET', `/runs/${run.id}`)).body.run;
      return current.previewState && current.previewState !== 'starting' ? current : undefined;
    },
    `run ${run.id}'s preview`,
    60_000,
  );
}

async function login(runId: string, body: Record<string, unknown> = {}) {
  const response = await svc.request('POST', `/runs/${runId}/preview/login`, { body });
  const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0]!;
  return { response, cookie };
}

const fetchPreview = (path: string, cookie?: string) =>
  fetch(`${previewOrigin}${path}`, { headers: cookie ? { cookie } : {}, redirect: 'manual' });

/** A WebSocket handshake through the proxy, then a frame each way; answers what came back. */
function webSocket(path: string, cookie: string): Promise<string> {
  const { hostname, port } = new URL(previewOrigin);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let received = Buffer.alloc(0);
    socket.once('error', reject);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.includes('echo me')) socket.end();
      else if (received.includes('hello')) socket.write('echo me');
    });
    socket.once('close', () => resolve(received.toString('latin1')));
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nCookie: ${cookie}\r\n\r\n`,
    );
    setTimeout(() => socket.destroy(), 10_000).unref();
  });
}

test.serial('a run opens its PR, its preview goes live, and only its own cookie lets a browser in', async (t) => {
  t.deepEqual((await svc.request('GET', '/preview/config')).body, { mode: 'path', host: null });
  const project = await projectWithPreview('previewed', previewYaml());
  const run = await runWithPreview(project, 'after');
  t.like(run, { state: 'succeeded', prState: 'open', previewState: 'live', previewFailureMessage: null });
  t.true(run.previewPort >= 30000 && run.previewPort <= 31000, String(run.previewPort));
  t.truthy(run.previewStartedAt);
  const other = await runWithPreview(project, 'other');
  t.is(other.previewState, 'live');
  t.not(other.previewPort, run.previewPort);

  // No cookie, another run's cookie, a cookie under this run's name with another run's value: refused.
  t.is((await fetchPreview(`/p/${run.id}/`)).status, 401);
  const { response, cookie } = await login(run.id);
  t.is(response.status, 200);
  t.is(response.body.url, `${previewOrigin}/p/${run.id}/`);
  t.regex(response.headers.get('set-cookie')!, new RegExp(`Path=/p/${run.id}/; .*HttpOnly; SameSite=Lax`));
  const otherCookie = (await login(other.id)).cookie;
  t.is((await fetchPreview(`/p/${run.id}/`, otherCookie)).status, 401);
  t.is((await fetchPreview(`/p/${run.id}/`, `svc_preview_${run.id}=${otherCookie.split('=')[1]}`)).status, 401);

  // In: the run's own workspace served, the prefix cut, svc's cookies kept from the preview and its forgeries dropped.
  const page = await fetchPreview(`/p/${run.id}/some/page?x=1`, `${cookie}; theme=dark`);
  t.is(page.status, 200);
  t.is(await page.text(), 'page: after at /some/page?x=1');
  // The preview's own cookies kept to its prefix and host, never the dashboard's; nothing cleared.
  t.deepEqual(page.headers.getSetCookie(), [
    `app=1; Path=/p/${run.id}`,
    `login=abc; HttpOnly; SameSite=Lax; Path=/p/${run.id}/api`,
  ]);
  t.is(page.headers.get('clear-site-data'), null);
  t.is(await (await fetchPreview(`/p/${run.id}/cookies`, `${cookie}; theme=dark`)).text(), 'cookies: theme=dark');
  t.is((await fetchPreview(`/p/${run.id}`, cookie)).headers.get('location'), `/p/${run.id}/`);
  // A decoy of the cookie's name in front does not lock the browser out; svc's cookies stay svc's.
  t.is((await fetchPreview(`/p/${run.id}/`, `svc_preview_${run.id}=decoy; ${cookie}`)).status, 200);
  t.is((await fetchPreview(`/p/${run.id}/worker`, cookie)).headers.get('service-worker-allowed'), null);
  // A status the HTTP layer would refuse to repeat is a bad gateway, and the proxy lives on.
  t.is((await fetchPreview(`/p/${run.id}/odd-status`, cookie)).status, 502);
  t.is((await fetchPreview(`/p/${run.id}/`, cookie)).status, 200);
  t.is(await (await fetchPreview(`/p/${other.id}/`, otherCookie)).text(), 'page: other at /');
  const frames = await webSocket(`/p/${run.id}/hmr`, cookie);
  t.regex(frames, /^HTTP\/1\.1 101 Switching Protocols/);
  t.true(frames.includes('hello') && frames.includes('echo me'));
  const handshake = frames.slice(0, frames.indexOf('\r\n\r\n')).toLowerCase();
  t.true(handshake.includes(`set-cookie: ws=1; path=/p/${run.id.toLowerCase()}`), handshake);
  t.false(handshake.includes('clear-site-data'), handshake);
  t.regex(await webSocket(`/p/${run.id}/hmr`, otherCookie), /^HTTP\/1\.1 401/);

  // A redirect must stay inside the run's preview.
  t.is(
    (await login(run.id, { redirect: `/p/${run.id}/some/page` })).response.body.url,
    `${previewOrigin}/p/${run.id}/some/page`,
  );
  for (const redirect of [`/p/${other.id}/`, 'https://example.com/', '//example.com/p/x/'])
    t.like((await login(run.id, { redirect })).response.body.error, { code: 'preview_redirect_invalid' }, redirect);

  // Teardown: the port is freed, the proxy answers 404, and a second teardown says so.
  const down = await svc.request('POST', `/runs/${run.id}/preview/teardown`, { body: { actor: 'reviewer' } });
  t.deepEqual(down.body, { status: 'torn-down', tornDown: true, previousState: 'live', port: run.previewPort });
  await waitFor(async () => (await fetchPreview(`/p/${run.id}/`, cookie)).status === 404, 'the proxy to let go');
  const refused = await new Promise<boolean>((resolve) => {
    const probe = connect(run.previewPort, '127.0.0.1');
    probe.once('connect', () => (probe.destroy(), resolve(false)));
    probe.once('error', () => resolve(true));
  });
  t.true(refused, 'the worker port is closed');
  const again = await svc.request('POST', `/runs/${run.id}/preview/teardown`, { body: {} });
  t.like(again.body, { status: 'already-torn-down', tornDown: false, previousState: 'torn-down' });
  t.is((await svc.request('GET', `/runs/${run.id}`)).body.run.previewState, 'torn-down');
  const kinds = (await runEvents(svc, run.id)).map((event) => event.kind);
  t.deepEqual(
    kinds.filter((kind) => kind.startsWith('preview.')),
    ['preview.starting', 'preview.live', 'preview.torn_down'],
  );
  await svc.request('POST', `/runs/${other.id}/preview/teardown`, { body: {} });
});

test.serial('a run without a preview: login is a validation error, teardown says never-launched', async (t) => {
  github.createRepo('acme', 'plain');
  const project = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/plain' } })).body
    .project.id;
  const { body } = await svc.request('POST', '/runs', { body: { agent: 'shell', project, prompt: 'true' } });
  await waitForRunState(svc, body.run.id, undefined, 60_000);
  t.like((await login(body.run.id)).response.body.error, { code: 'validation_error' });
  t.like((await svc.request('POST', `/runs/${body.run.id}/preview/teardown`, { body: {} })).body, {
    status: 'never-launched',
    tornDown: false,
    previousState: null,
  });
  // The actor's limit is on what was sent: padding that a trim would take off does not get it under.
  const padded = await svc.request('POST', `/runs/${body.run.id}/preview/teardown`, {
    body: { actor: ` ${'a'.repeat(199)}${' '.repeat(50)}` },
  });
  t.is(padded.status, 400);
  t.like(padded.body.error, { code: 'validation_error' });
});

test.serial(
  'an idle preview is torn down by its workflow timer; a preview that cannot start fails with why',
  async (t) => {
    const idle = await runWithPreview(await projectWithPreview('idle', previewYaml('  idle_ttl: 3s\n')), 'idle');
    t.is(idle.previewState, 'live');
    const evicted = await waitFor(
      async () => {
        const run = (await svc.request('GET', `/runs/${idle.id}`)).body.run;
        return run.previewState === 'torn-down' ? run : undefined;
      },
      'the idle eviction',
      30_000,
    );
    t.is(evicted.previewState, 'torn-down');
    const ended = (await runEvents(svc, idle.id)).find((event) => event.kind === 'preview.torn_down');
    t.like(ended?.payload, { reason: 'idle' });

    const broken = previewYaml().replace('node server.mjs', 'echo "no server here" >&2; exit 3');
    const failed = await runWithPreview(await projectWithPreview('broken-preview', broken), 'broken');
    t.is(failed.previewState, 'failed');
    t.regex(failed.previewFailureMessage, /no server here/);
  },
);

test.serial('at SVC_PREVIEW_MAX_LIVE, the least recently used preview makes room for a new one', async (t) => {
  const capped = await startTestStack({
    env: { SVC_GIT_TOKEN: 'ghp_test', SVC_GITHUB_API_URL: forge.url, SVC_PREVIEW_MAX_LIVE: '1' },
  });
  t.teardown(() => capped.stop());
  github.createRepo('acme', 'capped', {
    files: { '.svc/preview.yaml': previewYaml(), 'server.mjs': SERVER, 'page.txt': 'capped\n' },
  });
  const project = (await capped.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/capped' } }))
    .body.project.id;
  const previewOf = async (runId: string, state: string) =>
    waitFor(
      async () => {
        const run = (await capped.request('GET', `/runs/${runId}`)).body.run;
        return run.previewState === state ? run : undefined;
      },
      `run ${runId}'s preview ${state}`,
      60_000,
    );
  const dispatch = async (page: string) => {
    const prompt = `printf '${page}\\n' > page.txt && git add -A && git commit -qm 'page'`;
    return (await capped.request('POST', '/runs', { body: { agent: 'shell', project, prompt } })).body.run.id;
  };
  const first = await dispatch('first');
  await previewOf(first, 'live');
  const second = await dispatch('second');
  await previewOf(second, 'live');
  await previewOf(first, 'torn-down');
  const ended = (await runEvents(capped, first)).find((event) => event.kind === 'preview.torn_down');
  t.like(ended?.payload, { reason: 'evicted_lru', actor: 'svc:lru' });
  const madeRoom = (await runEvents(capped, second)).find((event) => event.kind === 'preview.made_room');
  t.deepEqual(madeRoom?.payload, { evicted: [first] });
  await capped.request('POST', `/runs/${second}/preview/teardown`, { body: {} });
});

test.serial('a preview whose workflow is terminated under it is failed by the reconciler and stopped', async (t) => {
  const run = await runWithPreview(await projectWithPreview('orphan', previewYaml()), 'orphaned');
  t.is(run.previewState, 'live');
  const { cookie } = await login(run.id);
  t.is((await fetchPreview(`/p/${run.id}/`, cookie)).status, 200);
  const connection = await Connection.connect({ address: svc.stack.temporalAddress });
  t.teardown(() => connection.close());
  const client = new Client({ connection });
  await client.workflow.getHandle(pullRequestWorkflowId(run.id)).terminate('an operator');
  await client.schedule.getHandle(reconcilerScheduleId(svc.config.taskQueue)).trigger();
  const failed = await waitFor(
    async () => {
      const current = (await svc.request('GET', `/runs/${run.id}`)).body.run;
      return current.previewState === 'failed' ? current : undefined;
    },
    'the reconciler to fail the orphaned preview',
    60_000,
  );
  t.regex(failed.previewFailureMessage, /workflow ended \(TERMINATED\)/);
  await waitFor(async () => (await fetchPreview(`/p/${run.id}/`, cookie)).status === 404, 'the proxy to stop', 5000);
  const answers = () =>
    new Promise<boolean>((resolve) => {
      const socket = connect(run.previewPort, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve(true))).once('error', () => resolve(false));
    });
  await waitFor(async () => !(await answers()), 'the orphaned preview stopped, its port freed', 30_000);
});
