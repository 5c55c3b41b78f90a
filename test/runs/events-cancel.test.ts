// A run's NDJSON event stream (history, live, paging), cancel, and `svc run` tailing it.
import test from 'ava';
import { existsSync, readFileSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { projectLockFile, withProjectLock } from '../../platform/project-lock.ts';
import { startGateQuery } from '../../workflows/messages.ts';
import { suiteTemporalAddress } from '../support/env.ts';
import { join } from 'node:path';
import { isProcessAlive } from '../../platform/processes.ts';
import { spawnSvc, waitFor, waitForActivityUnderWay } from '../support/processes.ts';
import { startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';

const github = new GitHubStandIn();
github.createRepo('acme', 'runs-cli');

let svc: TestStack;
test.before(async () => {
  svc = await startTestStack();
});
test.after.always(() => svc?.stop());

async function readStream(path: string, signal?: AbortSignal): Promise<any[]> {
  const response = await fetch(`${svc.url}${path}`, { headers: { authorization: `Bearer ${svc.token}` }, signal });
  if (response.status !== 200) throw new Error(`${response.status}: ${await response.text()}`);
  if (!response.headers.get('content-type')?.startsWith('application/x-ndjson')) throw new Error('not NDJSON');
  const text = await response.text();
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

test.serial('following a live run yields every event once, in order, and ends after the terminal line', async (t) => {
  const { body } = await svc.request('POST', '/runs', {
    body: { agent: 'shell', prompt: 'echo one\nsleep 1\necho two\nsleep 1\necho three' },
  });
  const lines = await readStream(`/runs/${body.run.id}/events`);
  t.deepEqual(
    lines.map((line) => line.seq),
    lines.map((_, i) => i + 1),
  );
  t.deepEqual(
    lines.filter((line) => line.stream === 'stdout').map((line) => line.payload.text),
    ['one', 'two', 'three'],
  );
  t.like(lines.at(-1), { kind: 'state_change', payload: { type: 'result', state: 'succeeded' } });
  t.deepEqual(Object.keys(lines[0]).sort(), ['id', 'kind', 'payload', 'runId', 'seq', 'stream', 'ts']);
  t.true(lines.every((line) => line.runId === body.run.id && !Number.isNaN(Date.parse(line.ts))));

  const history = await readStream(`/runs/${body.run.id}/events?follow=0`);
  t.deepEqual(history, lines, 'a finished run replays the same lines and closes');
  t.deepEqual(
    (await readStream(`/runs/${body.run.id}/events?since=3`)).map((line) => line.seq),
    lines.slice(3).map((line) => line.seq),
  );
  t.deepEqual(
    (await readStream(`/runs/${body.run.id}/events?limit=2`)).map((line) => line.seq),
    [1, 2],
  );
  t.deepEqual(
    (await readStream(`/runs/${body.run.id}/events?since=2&limit=2`)).map((line) => line.seq),
    [3, 4],
  );
});

test.serial('bad event-stream parameters are 400, an unknown run 404', async (t) => {
  const { body } = await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'true' } });
  for (const query of ['follow=yes', 'since=-1', 'since=01', 'limit=0', 'limit=x', 'other=1']) {
    const response = await svc.request('GET', `/runs/${body.run.id}/events?${query}`);
    t.is(response.status, 400, query);
    t.is(response.body.error.code, 'validation_error');
  }
  t.is((await svc.request('GET', '/runs/run_000000000000/events')).status, 404);
});

test.serial('cancel stops a running agent, records why, and is idempotent', async (t) => {
  const { body } = await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo started\nsleep 60' } });
  const runId = body.run.id;
  await waitFor(
    async () => (await readStream(`/runs/${runId}/events?follow=0`)).some((line) => line.payload?.text === 'started'),
    'the agent to start',
  );
  // The agent's host pid, as the sandbox supervisor recorded it (inside a sandbox $$ is another number).
  const agentPid = (
    JSON.parse(readFileSync(join(svc.config.dataDir, 'sandboxes', runId, 'agent.json'), 'utf8')) as { pid: number }
  ).pid;
  t.true(isProcessAlive(agentPid));

  const cancelled = await svc.request('POST', `/runs/${runId}/cancel`, { body: { reason: 'changed my mind' } });
  t.is(cancelled.status, 200);
  t.like(cancelled.body, { state: 'cancelled', alreadyTerminal: false, sandboxRun: { state: 'cancelled' } });
  t.regex(cancelled.body.sandboxRun.id, /^local:/);
  t.false(isProcessAlive(agentPid), 'the agent process is gone');
  const run = (await svc.request('GET', `/runs/${runId}`)).body.run;
  t.like(run, { state: 'cancelled', failureReason: null });
  const lines = await readStream(`/runs/${runId}/events?follow=0`);
  t.like(
    lines.find((line) => line.kind === 'cancel.requested'),
    { payload: { reason: 'changed my mind', requestedBy: 'operator' } },
  );
  t.like(lines.at(-1), { kind: 'state_change', payload: { state: 'cancelled' } });

  const again = await svc.request('POST', `/runs/${runId}/cancel`);
  t.like(again.body, { state: 'cancelled', alreadyTerminal: true });
  t.is((await svc.request('POST', '/runs/run_000000000000/cancel')).status, 404);
  t.is((await svc.request('POST', `/runs/${runId}/cancel`, { body: { reason: 7 } })).status, 400);
});

test.serial('a run cancelled while its workspace is cut never starts its agent', async (t) => {
  github.createRepo('acme', 'slow-cut');
  const project = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/slow-cut' } }))
    .body.project;
  const [owner, name] = project.localPath.split('/').slice(-2) as [string, string];
  const connection = await Connection.connect({ address: suiteTemporalAddress() });
  t.teardown(() => connection.close());
  let runId = '';
  let cancelling: ReturnType<typeof svc.request> | undefined;
  // The test holds the project's lock: the clone waits inside the start activity while the run is cancelled.
  await withProjectLock(projectLockFile(svc.config.projectsRoot, owner, name), 'exclusive', async () => {
    runId = (
      await svc.request('POST', '/runs', { body: { agent: 'shell', project: project.id, prompt: 'echo started' } })
    ).body.run.id;
    const handle = new Client({ connection }).workflow.getHandle(runId);
    await waitForActivityUnderWay(handle, 'prepareAndStartAgent');
    // The answer waits for the run's end, which waits for the lock: sent now, read after.
    cancelling = svc.request('POST', `/runs/${runId}/cancel`, { body: { reason: 'not this one' } });
    await waitFor(async () => (await handle.query(startGateQuery)).cancelRequested, 'the cancel to reach the run');
  });
  t.like((await cancelling!).body, { state: 'cancelled', alreadyTerminal: false });
  const lines = await readStream(`/runs/${runId}/events?follow=0`);
  t.like(lines.at(-1), { kind: 'state_change', payload: { state: 'cancelled', reason: 'not this one' } });
  t.false(
    lines.some((line) => line.kind === 'sandbox.started' || line.stream === 'stdout'),
    'no sandbox, no agent output',
  );
  t.false(existsSync(join(svc.config.dataDir, 'sandboxes', runId)), 'no sandbox was ever launched');
  const run = (await svc.request('GET', `/runs/${runId}`)).body.run;
  t.like(run, { state: 'cancelled', startedAt: run.endedAt });
});

test.serial('cancel reaches an agent that ignores SIGTERM', async (t) => {
  const { body } = await svc.request('POST', '/runs', {
    body: { agent: 'shell', prompt: "trap '' TERM\necho stubborn\nwhile true; do sleep 1; done" },
  });
  await waitForRunState(svc, body.run.id, ['running']);
  await waitFor(
    async () =>
      (await readStream(`/runs/${body.run.id}/events?follow=0`)).some((line) => line.payload?.text === 'stubborn'),
    'the agent to start',
  );
  const cancelled = await svc.request('POST', `/runs/${body.run.id}/cancel`);
  t.is(cancelled.body.state, 'cancelled');
});

test.serial('a server shutdown ends open event streams instead of leaving clients hanging', async (t) => {
  const own = await startTestStack();
  const { body } = await own.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo waiting\nsleep 30' } });
  const response = await fetch(`${own.url}/runs/${body.run.id}/events?follow=1`, {
    headers: { authorization: `Bearer ${own.token}` },
  });
  const reading = response.text();
  await waitForRunState(own, body.run.id, ['running']);
  await own.request('POST', `/runs/${body.run.id}/cancel`).catch(() => undefined);
  const stopping = own.stop();
  const text = await reading;
  await stopping;
  t.true(text.split('\n').filter(Boolean).length >= 1);
});

test.serial('svc run dispatches, tails the events and exits 0 only on success', async (t) => {
  const project = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/runs-cli' } }))
    .body.project.id;
  const cli = async (...args: string[]) => {
    const handle = spawnSvc(['run', ...args, `--url=${svc.url}`, `--token=${svc.token}`], { ...process.env });
    let stdout = '';
    handle.child.stdout!.on('data', (chunk) => (stdout += chunk));
    const code = await handle.exited;
    const text = stdout.split('\n').filter(Boolean);
    return {
      code,
      text,
      lines: args.includes('pretty') ? [] : text.map((line) => JSON.parse(line)),
      output: handle.output(),
    };
  };
  const ok = await cli('shell', project, '-p', 'cat README.md', '--seed', 'acme-1', '--model', 'm1');
  t.is(ok.code, 0, ok.output);
  t.is(ok.lines[0].type, 'run.spawned');
  t.like(ok.lines[0].run, { trigger: 'cli', seedId: 'acme-1', model: 'm1', projectId: project });
  t.true(ok.lines.some((line) => line.type === 'run.event' && line.payload?.text === '# runs-cli'));
  t.like(ok.lines.at(-1), { type: 'run.terminal', state: 'succeeded', failureReason: null, prUrl: null });

  const failed = await cli('shell', project, '-p', 'echo nope; exit 4');
  t.is(failed.code, 1);
  t.like(failed.lines.at(-1), { type: 'run.terminal', state: 'failed', failureReason: 'crashed' });

  t.is((await cli('nobody', project, '-p', 'x')).code, 2);
  t.is((await cli('shell', project)).code, 2, '--prompt is required');
  t.is((await cli('shell', project, '-p', 'x', '--base-commit', 'abc')).code, 2);
  t.is((await cli('shell', project, '-p', 'x', '--max-cost-usd', '-1')).code, 2);

  // --output pretty: the same records as text lines.
  const pretty = await cli('shell', project, '-p', 'cat README.md', '--output', 'pretty');
  t.is(pretty.code, 0, pretty.output);
  t.regex(pretty.text[0]!, /^run run_[0-9a-z]{12} dispatched: agent shell, project acme\/runs-cli \(prj_\w{12}\)$/);
  t.regex(pretty.text[1]!, /^dashboard: http:\/\/\S+\/ui\/runs\/run_[0-9a-z]{12}$/);
  t.true(
    pretty.text.some((line) => /^\d\d:\d\d:\d\d # runs-cli$/.test(line)),
    pretty.text.join('\n'),
  );
  t.regex(pretty.text.at(-1)!, /^run run_[0-9a-z]{12} succeeded$/);
});
