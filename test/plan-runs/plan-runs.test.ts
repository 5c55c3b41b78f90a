// Plan-runs end to end against the real stack: children strictly serial, each merged before the
// next starts, prompts rendered from the seeds, and the plan-run's reads and events.
import test from 'ava';
import { planFixture, type PlanFixture } from '../support/plan-fixture.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { waitFor } from '../support/processes.ts';

let fixture: PlanFixture;
let svc: TestStack;
let project: string;

test.before(async () => {
  fixture = await planFixture('acme', 'planned');
  svc = await startTestStack({ env: fixture.env });
  project = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/planned' } })).body.project.id;
});
test.after.always(async () => {
  fixture?.stopReviewer();
  await fixture?.forge.stop();
  await svc?.stop();
});

async function waitForPlanState(id: string, states = ['succeeded', 'failed', 'cancelled'], timeoutMs = 120_000) {
  return waitFor(
    async () => {
      const { body } = await svc.request('GET', `/plan-runs/${id}`);
      return states.includes(body.planRun?.state) ? body : undefined;
    },
    `plan-run ${id} to reach ${states.join('/')}`,
    timeoutMs,
  );
}

test.serial('a plan of three seeds runs to succeeded: three children, in order, each merged before the next', async (t) => {
  const created = await svc.request('POST', '/plan-runs', { body: { project, agent: 'shell', planId: fixture.planId, promptTemplate: fixture.template } });
  t.is(created.status, 201, JSON.stringify(created.body));
  const { planRun, children } = created.body;
  t.regex(planRun.id, /^plnr_[0-9a-z]{12}$/);
  t.like(planRun, { state: 'queued', planId: fixture.planId, source: 'plan', projectId: project, agentName: 'shell', trigger: 'manual', dispatcherHandle: 'operator' });
  t.deepEqual(
    children.map((child: { seq: number; seedId: string; state: string; runId: string | null }) => [child.seq, child.seedId, child.state, child.runId]),
    fixture.seeds.map((seed, index) => [index + 1, seed, 'pending', null]),
  );

  const done = await waitForPlanState(planRun.id);
  t.is(done.planRun.state, 'succeeded', JSON.stringify(done));
  t.deepEqual(done.children.map((child: { state: string }) => child.state), ['merged', 'merged', 'merged']);
  t.is(done.runs.length, 3);
  const runs = done.children.map((child: { runId: string }) => done.runs.find((run: { id: string }) => run.id === child.runId));
  for (const [index, run] of runs.entries()) {
    t.like(run, { state: 'succeeded', trigger: 'plan-run', seedId: fixture.seeds[index], prState: 'merged' });
    t.true(run.prompt.includes(`${fixture.seeds[index]}.md`) && run.prompt.includes(`Details of ${['first', 'second', 'third'][index]} step`), run.prompt);
  }
  // Strictly serial: a child starts only after the previous one's PR was merged.
  for (let i = 1; i < 3; i++) t.true(runs[i].createdAt >= Date.parse(done.children[i - 1].prMergedAt), `child ${i + 1} started before child ${i} merged`);
  // Everything landed on main, in order.
  const log = fixture.github.git(fixture.github.workdir('acme', 'planned'), 'log', '--format=%s', 'main');
  t.deepEqual(log.split('\n').filter((line) => line.startsWith('Work on')), [...fixture.seeds].reverse().map((seed) => `Work on ${seed}`));

  const events = (await svc.request('GET', `/plan-runs/${planRun.id}/events`)).text.trim().split('\n').map((line) => JSON.parse(line));
  const kinds = events.filter((event) => event.kind.startsWith('plan_run.')).map((event) => event.kind);
  t.deepEqual(kinds.filter((kind) => kind === 'plan_run.dispatched').length, 3);
  t.deepEqual(kinds.filter((kind) => kind === 'plan_run.merged').length, 3);
  t.deepEqual(kinds.filter((kind) => kind === 'plan_run.advanced').length, 2);
  t.is(kinds.at(-1), 'plan_run.succeeded');
  t.true(events.some((event) => event.kind === 'log.stdout' && event.payload.text === `committed ${fixture.seeds[2]}`), 'child run events are in the union');
  const keys = events.map((event) => `${event.runId}:${event.seq}`);
  t.is(new Set(keys).size, keys.length, 'each event once');

  const listed = await svc.request('GET', `/plan-runs?project=${project}&state=succeeded`);
  t.true(listed.body.planRuns.some((row: { id: string }) => row.id === planRun.id));
  t.false((await svc.request('GET', '/plan-runs?state=active')).body.planRuns.some((row: { id: string }) => row.id === planRun.id));
});
