// Concurrency limits: a run past its project's `admission.maxConcurrentRuns` or the
// instance's SVC_MAX_CONCURRENT_RUNS is accepted, stays queued saying why, and starts in dispatch
// order when a slot frees — across a kill -9 of the worker. The queue is a Temporal workflow
// (workflows/admission.workflow.ts), so nothing here is held in a process's memory.
import test, { type ExecutionContext } from 'ava';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { spawnSvc, waitFor, waitForOutput } from '../support/processes.ts';
import {
  lastRunEvents,
  runEventLines,
  runEvents,
  startTestStack,
  waitForRunState,
  type TestResponse,
} from '../support/stack.ts';
import { startApiOnlyStack } from '../support/worker-kill.ts';

type Api = {
  request(method: string, path: string, options?: { body?: unknown; token?: string | null }): Promise<TestResponse>;
};

const github = new GitHubStandIn();
github.createRepo('acme', 'capped', { files: { '.svc/config.yaml': 'admission:\n  maxConcurrentRuns: 1\n' } });
github.createRepo('acme', 'uncapped', { files: { 'README.md': 'no limit here\n' } });

const LONG = 'echo started; sleep 600';

async function dispatch(api: Api, body: Record<string, unknown>): Promise<string> {
  const response = await api.request('POST', '/runs', { body: { agent: 'shell', prompt: LONG, ...body } });
  if (response.status !== 201) throw new Error(`dispatch: ${response.status} ${response.text}`);
  return response.body.run.id as string;
}

const runOf = async (api: Api, runId: string) => (await api.request('GET', `/runs/${runId}`)).body.run;

async function running(api: Api, runId: string) {
  try {
    return await waitFor(async () => {
      const run = await runOf(api, runId);
      if (run.state !== 'queued' && run.state !== 'running') throw new Error(`run ${runId} ended`);
      return run.state === 'running' ? run : null;
    }, `run ${runId} running`);
  } catch (error) {
    const events = await lastRunEvents(api, runId);
    throw new Error(`${(error as Error).message}: ${JSON.stringify(await runOf(api, runId))}\n${events}`);
  }
}

async function waiting(api: Api, runId: string, reason: RegExp) {
  const run = await waitFor(async () => {
    const current = await runOf(api, runId);
    return current.queueReason ? current : null;
  }, `run ${runId} to say why it waits`);
  if (run.state !== 'queued' || !reason.test(run.queueReason))
    throw new Error(`run ${runId} should wait (${reason}): ${JSON.stringify(run)}`);
  return run;
}

async function cancelled(t: ExecutionContext, api: Api, runId: string) {
  await api.request('POST', `/runs/${runId}/cancel`, { body: { reason: 'make room' } });
  const run = await waitForRunState(api, runId, undefined, 60_000);
  t.is(run.state, 'cancelled', JSON.stringify(run));
  return run;
}

const sandboxStarts = async (api: Api, runId: string) =>
  (await runEvents(api, runId)).filter((event) => event.kind === 'sandbox.started').length;

test.serial("a project's maxConcurrentRuns queues its next run, not another project's", async (t) => {
  const svc = await startTestStack();
  t.teardown(() => svc.stop());
  const register = async (name: string) =>
    (await svc.request('POST', '/projects', { body: { gitUrl: `https://github.com/acme/${name}` } })).body.project
      .id as string;
  const capped = await register('capped');
  const uncapped = await register('uncapped');

  const first = await dispatch(svc, { project: capped });
  await running(svc, first);
  const second = await dispatch(svc, { project: capped });
  const third = await dispatch(svc, { project: capped });
  const reason = /project prj_\w+ has 1 of its 1 concurrent runs \(admission\.maxConcurrentRuns/;
  await waiting(svc, second, reason);
  await waiting(svc, third, reason);
  // Other projects' runs, and runs without a project, do not wait behind this project's limit.
  const elsewhere = await dispatch(svc, { project: uncapped });
  const loose = await dispatch(svc, {});
  await running(svc, elsewhere);
  await running(svc, loose);
  t.like(await runOf(svc, second), { state: 'queued' });

  // A run cancelled while it waits ends without ever starting, and gives its place back.
  await cancelled(t, svc, third);
  t.is(await sandboxStarts(svc, third), 0, 'a cancelled waiting run never started its agent');

  await cancelled(t, svc, first);
  const started = await running(svc, second);
  t.is(started.queueReason, null);
  const events = (await runEventLines(svc, second)).join('\n');
  t.regex(events, /"kind":"admission\.waiting"/);
  t.regex(events, /"kind":"admission\.granted"/);
  for (const runId of [second, elsewhere, loose]) await cancelled(t, svc, runId);
});

test.serial(
  'SVC_MAX_CONCURRENT_RUNS: waiting runs start in dispatch order, across a kill -9 of the worker',
  async (t) => {
    const { environment, api } = await startApiOnlyStack(t, { SVC_MAX_CONCURRENT_RUNS: '2' });
    const firstWorker = spawnSvc(['worker'], environment.env);
    t.teardown(() => firstWorker.child.kill('SIGKILL'));
    await waitForOutput(firstWorker, /worker: polling/);

    t.like((await api.request('GET', '/instance')).body, {
      admission: { maxConcurrentRuns: 2, maxQueueDepth: null, maxPendingPods: null },
    });
    const holders = [await dispatch(api, {}), await dispatch(api, {})];
    for (const runId of holders) await running(api, runId);
    const queued = [await dispatch(api, {}), await dispatch(api, {}), await dispatch(api, {})];
    const reason = /2 of the instance's 2 concurrent runs are taken \(SVC_MAX_CONCURRENT_RUNS\)/;
    for (const runId of queued) await waiting(api, runId, reason);

    // The worker dies while three runs wait; a slot frees while no worker is up at all.
    firstWorker.child.kill('SIGKILL');
    await firstWorker.exited;
    await api.request('POST', `/runs/${holders[0]}/cancel`, { body: { reason: 'make room' } });
    const secondWorker = spawnSvc(['worker'], environment.env);
    t.teardown(async () => {
      secondWorker.child.kill('SIGTERM');
      await secondWorker.exited;
    });
    t.is((await waitForRunState(api, holders[0], undefined, 90_000)).state, 'cancelled');

    // The earliest waiting run takes the slot; the later ones still wait, in order.
    await running(api, queued[0]);
    for (const runId of queued.slice(1)) t.like(await runOf(api, runId), { state: 'queued' });
    await cancelled(t, api, holders[1]);
    await running(api, queued[1]);
    t.like(await runOf(api, queued[2]), { state: 'queued' });
    for (const runId of [queued[0], queued[1]]) await cancelled(t, api, runId);
    await running(api, queued[2]);
    await cancelled(t, api, queued[2]);
    for (const runId of [...holders, ...queued]) t.is(await sandboxStarts(api, runId), 1, `${runId} started once`);
  },
);
