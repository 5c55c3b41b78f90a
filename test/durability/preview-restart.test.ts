// A live preview outlives its worker: SIGKILL the only worker and the preview still answers through
// the proxy (its supervisor is detached, the proxy is the API's); a second worker picks the
// workflow up, and the idle timer set before the kill, moved by a visit made while no worker ran,
// tears the preview down on time, freeing its port.
import test from 'ava';
import { connect } from 'node:net';
import { freePort } from '../support/free-port.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { spawnSvc, waitFor, waitForOutput } from '../support/processes.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { runEvents, waitForRunState } from '../support/stack.ts';
import { startApiOnlyStack } from '../support/worker-kill.ts';

const IDLE_SECONDS = 12;
const SERVER = `
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
createServer((_request, response) => response.end('still here: ' + readFileSync('page.txt', 'utf8').trim()))
  .listen(Number(process.env.PORT), process.env.HOST);
`;

const answers = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => resolve(true)).once('error', () => resolve(false));
    socket.once('connect', () => socket.destroy());
  });

test('a live preview and its idle timer survive SIGKILL of the worker', async (t) => {
  const forge = new PullRequestsStandIn();
  await forge.start();
  t.teardown(() => forge.stop());
  // Its git configuration reaches the workers through the environment the stack hands them.
  new GitHubStandIn().createRepo('acme', 'durable-preview', {
    files: {
      '.svc/preview.yaml':
        'preview:\n  type: server\n  command: node server.mjs\n  port: 4000\n' + `  idle_ttl: ${IDLE_SECONDS}s\n`,
      'server.mjs': SERVER,
      'page.txt': 'before\n',
    },
  });
  // A fixed API port and one operator token: the workers' callback proxies (the finalizer's
  // result) reach the API there, with run tokens it accepts.
  const port = await freePort();
  const { environment, api } = await startApiOnlyStack(t, {
    SVC_PORT: String(port),
    SVC_API_URL: `http://127.0.0.1:${port}`,
    SVC_API_TOKEN: 'preview-restart-operator-token',
    SVC_GIT_TOKEN: 'ghp_test',
    SVC_GITHUB_API_URL: forge.url,
  });
  const firstWorker = spawnSvc(['worker'], environment.env);
  t.teardown(() => firstWorker.child.kill('SIGKILL'));
  await waitForOutput(firstWorker, /worker: polling/);
  // Registering clones the repository: a worker's activity.
  const gitUrl = 'https://github.com/acme/durable-preview';
  const project = (await api.request('POST', '/projects', { body: { gitUrl } })).body.project.id;
  const prompt = "printf 'the run\\n' > page.txt && git commit -qam 'the page'";
  const runId = (await api.request('POST', '/runs', { body: { agent: 'shell', project, prompt } })).body.run.id;
  await waitForRunState(api, runId, undefined, 60_000).catch(async (error: Error) => {
    const kinds = (await runEvents(api, runId)).map(
      (event) => `${event.kind} ${JSON.stringify(event.payload).slice(0, 300)}`,
    );
    throw new Error(`${error.message}\nworker:\n${firstWorker.output().slice(-4000)}\n${kinds.join('\n')}`);
  });
  const live = await waitFor(
    async () => {
      const run = (await api.request('GET', `/runs/${runId}`)).body.run;
      return run.previewState === 'live' ? run : undefined;
    },
    'the preview live',
    60_000,
  );

  firstWorker.child.kill('SIGKILL');
  await firstWorker.exited;
  // No worker now: the preview is served all the same, and the visit is the idle clock's news.
  const login = await api.request('POST', `/runs/${runId}/preview/login`, { body: {} });
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  const visitedAt = Date.now();
  t.is(await (await fetch(login.body.url, { headers: { cookie } })).text(), 'still here: the run');
  t.true(await answers(live.previewPort), "the worker's preview port is its supervisor's, alive");
  await new Promise((resolve) => setTimeout(resolve, 3000));
  t.is((await api.request('GET', `/runs/${runId}`)).body.run.previewState, 'live');

  const secondWorker = spawnSvc(['worker'], environment.env);
  t.teardown(async () => {
    secondWorker.child.kill('SIGTERM');
    await secondWorker.exited;
  });
  const down = await waitFor(
    async () => {
      const run = (await api.request('GET', `/runs/${runId}`)).body.run;
      return run.previewState === 'torn-down' ? run : undefined;
    },
    'the idle teardown',
    90_000,
  );
  const events = await runEvents(api, runId);
  const ended = events.find((event) => event.kind === 'preview.torn_down');
  t.like(ended?.payload, { reason: 'idle' });
  t.truthy(down.previewLastHitAt, 'the visit made while no worker ran reached the workflow');
  t.true(
    Date.parse(ended!.ts) >= visitedAt + IDLE_SECONDS * 1000 - 1000,
    `idle counted from the visit (${new Date(visitedAt).toISOString()}), torn down at ${ended!.ts}`,
  );
  await waitFor(async () => !(await answers(live.previewPort)), 'the port freed', 30_000);
});
