// No run is ever stuck: whatever fails for good inside a run's workflow, the run ends (failed, with
// the closest reason and an event naming what broke) and its token dies; a row left behind by a
// workflow that closed anyway (terminated, say) is repaired by the reconciler, on its schedule or
// when someone asks to cancel it; a project with active work cannot be deleted from under it.
import test from 'ava';
import { rmSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { mintRunToken } from '../../core/run-token.ts';
import { GitHubStandIn } from '../support/github-stand-in.ts';
import { PullRequestsStandIn } from '../support/pull-requests-stand-in.ts';
import { planFixture } from '../support/plan-fixture.ts';
import { waitFor } from '../support/processes.ts';
import { runEvents, startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

const github = new GitHubStandIn();
const forge = new PullRequestsStandIn();
let svc: TestStack;
let temporal: Client;

test.before(async () => {
  await forge.start();
  svc = await startTestStack({
    env: {
      SVC_GIT_TOKEN: 'ghp_test',
      SVC_GITHUB_API_URL: forge.url,
      SVC_RECONCILE_INTERVAL_MS: '2000',
      SVC_RECONCILE_STALE_AFTER_MS: '1000',
    },
  });
  temporal = new Client({ connection: await Connection.connect({ address: svc.stack.temporalAddress }) });
});
test.after.always(async () => {
  await svc?.stop();
  await forge.stop();
  await temporal?.connection.close();
});

const events = (runId: string) => runEvents(svc, runId);

test.serial('an activity that gives up for good ends the run failed, with an event and a dead token', async (t) => {
  github.createRepo('acme', 'vanishing');
  const project = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/vanishing' } }))
    .body.project;
  const runId = (
    await svc.request('POST', '/runs', {
      body: { agent: 'shell', project: project.id, prompt: 'echo x >> README.md\ngit commit -qam x\nsleep 2' },
    })
  ).body.run.id;
  await waitForRunState(svc, runId, ['running']);
  // svc's own clone disappears while the agent works: the hand-over can never be pushed.
  rmSync(project.localPath, { recursive: true, force: true });
  const run = await waitForRunState(svc, runId, undefined, 90_000);
  t.like(run, { state: 'failed', failureReason: 'finalize_failed' });
  const failure = (await events(runId)).find((event) => event.kind === 'run.internal_failure');
  t.like(failure?.payload, { phase: 'finalizing', activity: 'deliverBranch' });
  const token = mintRunToken(svc.token, runId);
  t.is((await svc.request('GET', `/runs/${runId}/inbox?peek=1`, { token })).status, 401, 'its token died with it');
  t.like((await svc.request('POST', `/runs/${runId}/cancel`)).body, { alreadyTerminal: true, state: 'failed' });
});

test.serial('a run whose workflow closed without ending it is repaired when cancelled: alreadyTerminal', async (t) => {
  const runId = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'sleep 120' } })).body.run.id;
  await waitForRunState(svc, runId, ['running']);
  await temporal.workflow.getHandle(runId).terminate('an operator pulled the plug');
  t.is((await svc.request('GET', `/runs/${runId}`)).body.run.state, 'running', 'the row is behind');
  const cancelled = await svc.request('POST', `/runs/${runId}/cancel`);
  t.is(cancelled.status, 200, cancelled.text);
  t.like(cancelled.body, { alreadyTerminal: true, state: 'failed' });
  t.like((await svc.request('GET', `/runs/${runId}`)).body.run, { state: 'failed', failureReason: 'sandbox_run_lost' });
  const repaired = (await events(runId)).find((event) => event.kind === 'run.reconciled');
  t.like(repaired?.payload, { workflowStatus: 'TERMINATED', state: 'failed' });
});

test.serial('the reconciler repairs rows on its schedule, with nobody asking', async (t) => {
  const runId = (await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'sleep 120' } })).body.run.id;
  await waitForRunState(svc, runId, ['running']);
  await temporal.workflow.getHandle(runId).terminate('gone');
  const run = await waitFor(async () => {
    const current = (await svc.request('GET', `/runs/${runId}`)).body.run;
    return current.state === 'failed' ? current : undefined;
  }, 'the scheduled reconciler to repair the run');
  t.is(run.failureReason, 'sandbox_run_lost');
});

test.serial(
  'a plan-run whose workflow closed is repaired too; a project with active work is not deleted',
  async (t) => {
    const fixture = await planFixture('acme', 'stalled', ['Only one'], { reviewer: false });
    t.teardown(async () => {
      fixture.stopReviewer();
      await fixture.forge.stop();
    });
    const project = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/stalled' } }))
      .body.project.id;
    const created = await svc.request('POST', '/plan-runs', {
      body: { project, agent: 'shell', planId: fixture.planId, promptTemplate: 'sleep 120 # {seed_id}' },
    });
    t.is(created.status, 201, created.text);
    const planRunId = created.body.planRun.id;
    await waitFor(
      async () => (await svc.request('GET', `/plan-runs/${planRunId}`)).body.planRun.state === 'running',
      'the plan-run to run',
    );
    const refused = await svc.request('DELETE', `/projects/${project}`);
    t.is(refused.status, 409, 'the project has an active plan-run');
    t.regex(refused.body.error.message, /active/);

    await temporal.workflow.getHandle(planRunId).terminate('gone');
    const cancelled = await svc.request('POST', `/plan-runs/${planRunId}/cancel`);
    t.like(cancelled.body, {
      alreadyTerminal: true,
      planRun: { state: 'failed', failureReason: 'plan_run_internal_failure' },
    });
    // Its child run is a run in its own right: it goes on until it is cancelled itself.
    const child = (await svc.request('GET', `/plan-runs/${planRunId}`)).body.children[0].runId;
    if (child) await svc.request('POST', `/runs/${child}/cancel`);
  },
);
