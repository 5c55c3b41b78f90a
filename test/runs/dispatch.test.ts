// Dispatch answers without waiting for a worker, a run is readable at once, an Idempotency-Key
// names one run durably, and a sandbox that vanishes fails its run with sandbox_run_lost.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { waitFor } from '../support/processes.ts';
import { runEventLines, startTestStack, waitForRunState } from '../support/stack.ts';

// One GitHub stand-in per file: it points this process's git configuration at its repositories.
const github = new GitHubStandIn();

test('with no worker, POST /runs answers 201 queued and GET /runs/{id} reads the run from its workflow', async (t) => {
  const svc = await startTestStack({ worker: false });
  t.teardown(() => svc.stop());
  const dispatched = await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo later' } });
  t.is(dispatched.status, 201);
  const read = await svc.request('GET', `/runs/${dispatched.body.run.id}`);
  t.is(read.status, 200);
  t.deepEqual(read.body.run, dispatched.body.run, 'the same queued run, rebuilt from the workflow history');
  t.is(read.body.run.state, 'queued');
  t.is((await svc.request('GET', '/runs/run_zzzzzzzzzzzz')).status, 404);
});

test('an Idempotency-Key makes a retried dispatch find the same run, durably', async (t) => {
  const svc = await startTestStack();
  t.teardown(() => svc.stop());
  const send = (key: string, prompt = 'echo once') =>
    svc.request('POST', '/runs', { body: { agent: 'shell', prompt }, headers: { 'idempotency-key': key } });
  const first = await send('deploy-42');
  const again = await send('deploy-42');
  t.is(first.status, 201);
  t.is(again.status, 201);
  t.is(again.body.run.id, first.body.run.id);
  t.is(again.body.run.prompt, 'echo once');
  const different = await send('deploy-42', 'echo a different body under the same key');
  t.is(different.status, 409, 'a key repeats one request only');
  t.is(different.body.error.code, 'idempotency_key_reused');
  await waitForRunState(svc, first.body.run.id);
  t.is((await send('deploy-42')).body.run.id, first.body.run.id, 'also after the run finished');
  const other = await send('deploy-43');
  t.not(other.body.run.id, first.body.run.id);
  const connection = await Connection.connect({ address: svc.stack.temporalAddress });
  t.teardown(() => connection.close());
  // Temporal's visibility lags its starts: wait until it shows the second run, then count them all.
  const runs = async () =>
    (await new Client({ connection }).workflow.count(`TaskQueue = '${svc.config.taskQueue}' AND SvcKind = 'run'`))
      .count;
  await waitFor(async () => (await runs()) >= 2, 'visibility to show both runs', 15_000);
  t.is(await runs(), 2, 'one workflow per key');
  t.is(
    (
      await svc.request('POST', '/runs', {
        body: { agent: 'shell', prompt: 'x' },
        headers: { 'idempotency-key': 'has space' },
      })
    ).status,
    400,
  );
});

test('a sandbox whose supervisor dies without a word fails the run with sandbox_run_lost', async (t) => {
  const svc = await startTestStack();
  t.teardown(() => svc.stop());
  const { body } = await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo up\nsleep 60' } });
  await waitForRunState(svc, body.run.id, ['running']);
  const supervisorFile = join(svc.config.dataDir, 'sandboxes', body.run.id, 'supervisor.json');
  const agentFile = join(svc.config.dataDir, 'sandboxes', body.run.id, 'agent.json');
  const { pid: supervisor } = JSON.parse(readFileSync(supervisorFile, 'utf8')) as { pid: number };
  const { pid: agent } = await waitFor(
    async () => JSON.parse(readFileSync(agentFile, 'utf8')) as { pid: number },
    'the agent record',
  );
  // The supervisor first: had the agent died first, the supervisor would have recorded its exit.
  process.kill(supervisor, 'SIGKILL');
  process.kill(-agent, 'SIGKILL');
  t.like(await waitForRunState(svc, body.run.id), { state: 'failed', failureReason: 'sandbox_run_lost' });
});

test('a project brings its own agents in .svc/agents/, for its runs only; a broken one is 422', async (t) => {
  github.createRepo('acme', 'own-agents', {
    files: {
      '.svc/agents/reviewer.yaml':
        'description: reviews\ncommand: ["bash", "-c", "echo reviewed by the project agent"]\nsteering: none\n',
    },
  });
  github.createRepo('acme', 'broken-agents', { files: { '.svc/agents/bad.yaml': 'command: "not a list"\n' } });
  const svc = await startTestStack();
  t.teardown(() => svc.stop());
  const project = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/own-agents' } }))
    .body.project.id;
  const { body } = await svc.request('POST', '/runs', { body: { agent: 'reviewer', project, prompt: 'review' } });
  t.is(body.run.renderedAgentJson.source, 'project');
  const run = await waitForRunState(svc, body.run.id);
  t.is(run.state, 'succeeded');
  t.regex((await runEventLines(svc, run.id)).join('\n'), /reviewed by the project agent/);
  t.is(
    (await svc.request('POST', '/runs', { body: { agent: 'reviewer', prompt: 'review' } })).status,
    404,
    'not without the project',
  );

  const broken = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/broken-agents' } }))
    .body.project.id;
  const refused = await svc.request('POST', '/runs', { body: { agent: 'bad', project: broken, prompt: 'x' } });
  t.is(refused.status, 422);
  t.is(refused.body.error.code, 'agent_schema_error');
  t.regex(refused.body.error.message, /\.svc\/agents\/bad\.yaml/);
});

test('GET /runs filters by project, agent or state, pages, and sorts both ways', async (t) => {
  github.createRepo('acme', 'listing');
  const svc = await startTestStack();
  t.teardown(() => svc.stop());
  const project = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/listing' } })).body
    .project.id;
  const ids: string[] = [];
  for (const body of [
    { agent: 'shell', prompt: 'true' },
    { agent: 'shell', project, prompt: 'true' },
    { agent: 'shell', project, prompt: 'true' },
  ]) {
    ids.push((await svc.request('POST', '/runs', { body })).body.run.id);
  }
  for (const id of ids) {
    const ended = await waitForRunState(svc, id);
    t.is(ended.state, 'succeeded', JSON.stringify(ended));
  }
  const newestFirst = (await svc.request('GET', '/runs')).body;
  t.is(newestFirst.total, 3);
  t.deepEqual(
    newestFirst.runs.map((run: { id: string }) => run.id),
    [...ids].reverse(),
  );
  t.deepEqual(
    (await svc.request('GET', '/runs?dir=asc')).body.runs.map((run: { id: string }) => run.id),
    ids,
  );
  const byProject = (await svc.request('GET', `/runs?project=${project}`)).body;
  t.is(byProject.total, 2);
  t.true(byProject.runs.every((run: { projectId: string }) => run.projectId === project));
  t.is((await svc.request('GET', '/runs?agent=shell')).body.total, 3);
  t.is((await svc.request('GET', '/runs?agent=claude-code')).body.total, 0);
  const page = (await svc.request('GET', '/runs?limit=1&offset=1&dir=asc')).body;
  t.like(page, { total: 3, limit: 1, offset: 1 });
  t.deepEqual(
    page.runs.map((run: { id: string }) => run.id),
    [ids[1]],
  );
  t.is((await svc.request('GET', '/runs?sort=cost')).body.runs.length, 3);
  // Beyond the spec, for the dashboard: a state filter, alone or with project or agent.
  t.is((await svc.request('GET', '/runs?state=succeeded')).body.total, 3);
  t.is((await svc.request('GET', '/runs?state=queued,running')).body.total, 0);
  t.is((await svc.request('GET', `/runs?state=running,succeeded&project=${project}`)).body.total, 2);
  t.is((await svc.request('GET', '/runs?state=failed&agent=shell')).body.total, 0);
  for (const bad of ['bogus', 'succeeded,', ',running', 'SUCCEEDED']) {
    const refused = await svc.request('GET', `/runs?state=${bad}`);
    t.is(refused.status, 400, bad);
    t.is(refused.body.error.code, 'validation_error');
  }
});

test('a run ending while queued is never_started; baseCommit without a project is 400; metadata is kept', async (t) => {
  github.createRepo('acme', 'pinned');
  const svc = await startTestStack();
  t.teardown(() => svc.stop());
  const project = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/pinned' } })).body
    .project.id;
  // A commit the clone has never seen: the workspace cannot be cut, so the run never starts.
  const unknown = 'f'.repeat(40);
  const run = (
    await svc.request('POST', '/runs', { body: { agent: 'shell', project, prompt: 'echo never', baseCommit: unknown } })
  ).body.run;
  const ended = await waitForRunState(svc, run.id);
  t.like(ended, { state: 'failed', failureReason: 'never_started' });
  const orphan = await svc.request('POST', '/runs', {
    body: { agent: 'shell', prompt: 'echo where', baseCommit: unknown },
  });
  t.is(orphan.status, 400);
  t.is(orphan.body.error.code, 'validation_error');
  t.regex(orphan.body.error.message, /baseCommit needs a project/);

  // metadata: an object of the caller's own, stored with the run; arrays and scalars are refused.
  const labelled = await svc.request('POST', '/runs', {
    body: { agent: 'shell', prompt: 'true', metadata: { ticket: 'ABC-1', attempt: 2 } },
  });
  t.is(labelled.status, 201, labelled.text);
  t.deepEqual(labelled.body.run.metadata, { ticket: 'ABC-1', attempt: 2 });
  t.deepEqual((await waitForRunState(svc, labelled.body.run.id)).metadata, { ticket: 'ABC-1', attempt: 2 });
  for (const metadata of [['a'], 'text', 3])
    t.is((await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'true', metadata } })).status, 400);
});
