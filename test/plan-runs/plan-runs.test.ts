// Plan-runs end to end against the real stack: children strictly serial, each merged before the
// next starts, prompts rendered from the seeds, and the plan-run's reads and events.
import test from 'ava';
import { setSwitch, startPlanStack, waitForPlanRunState, type PlanFixture } from '../support/plan-fixture.ts';
import type { TestStack } from '../support/stack.ts';

let fixture: PlanFixture;
let svc: TestStack;
let project: string;
let stop: () => Promise<void> = async () => {};

test.before(async () => {
  // Public mode (the operator's token works as ever) so spectators' views of a plan-run are checked too.
  ({ fixture, svc, project, stop } = await startPlanStack('acme', 'planned', {
    env: { SVC_TEMPORAL_UI_URL: 'http://temporal-ui.test/', SVC_AUTH: 'public', SVC_PUBLIC_ALLOWLIST: 'acme' },
  }));
  fixture.github.createRepo('acme', 'unseeded');
});
test.after.always(() => stop());

const waitForPlanState = (id: string, states?: string[]) => waitForPlanRunState(svc, id, states);

test.serial(
  'a plan of three seeds runs to succeeded: three children, in order, each merged before the next',
  async (t) => {
    const created = await svc.request('POST', '/plan-runs', {
      body: { project, agent: 'shell', planId: fixture.planId, promptTemplate: fixture.template },
    });
    t.is(created.status, 201, JSON.stringify(created.body));
    const { planRun, children } = created.body;
    t.regex(planRun.id, /^plnr_[0-9a-z]{12}$/);
    t.is(created.body.links.temporalUi, `http://temporal-ui.test/namespaces/default/workflows/${planRun.id}`);
    t.is(created.body.links.dashboard, `${svc.url}/ui/plan-runs/${planRun.id}`);
    t.like(planRun, {
      state: 'queued',
      planId: fixture.planId,
      source: 'plan',
      projectId: project,
      agentName: 'shell',
      trigger: 'manual',
      dispatcherHandle: 'operator',
    });
    t.deepEqual(
      children.map((child: { seq: number; seedId: string; state: string; runId: string | null }) => [
        child.seq,
        child.seedId,
        child.state,
        child.runId,
      ]),
      fixture.seeds.map((seed, index) => [index + 1, seed, 'pending', null]),
    );

    const done = await waitForPlanState(planRun.id);
    t.is(done.planRun.state, 'succeeded', JSON.stringify(done));
    t.deepEqual(
      done.children.map((child: { state: string }) => child.state),
      ['merged', 'merged', 'merged'],
    );
    t.is(done.runs.length, 3);
    t.is(done.links.temporalUi, `http://temporal-ui.test/namespaces/default/workflows/${planRun.id}`);
    t.is(done.links.dashboard, `${svc.url}/ui/plan-runs/${planRun.id}`);
    // A spectator is linked to the page too, never to the Temporal UI.
    t.deepEqual((await svc.request('GET', `/plan-runs/${planRun.id}`, { token: null })).body.links, {
      temporalUi: null,
      dashboard: `${svc.url}/ui/plan-runs/${planRun.id}`,
    });
    t.is(
      (await svc.request('GET', `/runs/${done.children[0].runId}`)).body.links.temporalUi,
      `http://temporal-ui.test/namespaces/default/workflows/${done.children[0].runId}`,
    );
    const runs = done.children.map((child: { runId: string }) =>
      done.runs.find((run: { id: string }) => run.id === child.runId),
    );
    for (const [index, run] of runs.entries()) {
      t.like(run, { state: 'succeeded', trigger: 'plan-run', seedId: fixture.seeds[index], prState: 'merged' });
      t.true(
        run.prompt.includes(`${fixture.seeds[index]}.md`) &&
          run.prompt.includes(`Details of ${['first', 'second', 'third'][index]} step`),
        run.prompt,
      );
    }
    // Strictly serial: a child starts only after the previous one's PR was merged.
    for (let i = 1; i < 3; i++)
      t.true(
        runs[i].createdAt >= Date.parse(done.children[i - 1].prMergedAt),
        `child ${i + 1} started before child ${i} merged`,
      );
    // Everything landed on main, in order.
    const log = fixture.github.git(fixture.github.workdir('acme', 'planned'), 'log', '--format=%s', 'main');
    t.deepEqual(
      log.split('\n').filter((line) => line.startsWith('Work on')),
      [...fixture.seeds].reverse().map((seed) => `Work on ${seed}`),
    );

    const events = (await svc.request('GET', `/plan-runs/${planRun.id}/events`)).text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const kinds = events.filter((event) => event.kind.startsWith('plan_run.')).map((event) => event.kind);
    t.deepEqual(kinds.filter((kind) => kind === 'plan_run.dispatched').length, 3);
    t.deepEqual(kinds.filter((kind) => kind === 'plan_run.merged').length, 3);
    t.deepEqual(kinds.filter((kind) => kind === 'plan_run.advanced').length, 2);
    t.is(kinds.at(-1), 'plan_run.succeeded');
    t.true(
      events.some((event) => event.kind === 'log.stdout' && event.payload.text === `committed ${fixture.seeds[2]}`),
      'child run events are in the union',
    );
    const keys = events.map((event) => `${event.runId}:${event.seq}`);
    t.is(new Set(keys).size, keys.length, 'each event once');

    const listed = await svc.request('GET', `/plan-runs?project=${project}&state=succeeded`);
    t.true(listed.body.planRuns.some((row: { id: string }) => row.id === planRun.id));
    t.false(
      (await svc.request('GET', '/plan-runs?state=active')).body.planRuns.some(
        (row: { id: string }) => row.id === planRun.id,
      ),
    );
  },
);

test.serial(
  'issues keep their order; a closed seed is skipped; a failing child fails the plan-run with its reason; resume ' +
    'skips merged children',
  async (t) => {
    const [a, b, c] = ['Alpha', 'Beta', 'Gamma'].map((title) =>
      fixture.github.createSeed('acme', 'planned', title),
    ) as [string, string, string];
    // A seed closed on the default branch is skipped when its turn comes.
    const extra = fixture.github.createSeed('acme', 'planned', 'Already done');
    fixture.github.sd('acme', 'planned', 'close', extra);
    fixture.github.pushAll('acme', 'planned', 'close a seed');
    setSwitch(fixture, 'fail', a);
    const created = await svc.request('POST', '/plan-runs', {
      body: {
        project,
        agent: 'shell',
        issues: [extra, c, a, b],
        promptTemplate: fixture.template,
        dispatcherHandle: 'nightly-bot',
      },
    });
    t.is(created.status, 201, JSON.stringify(created.body));
    t.deepEqual(
      created.body.children.map((child: { seedId: string }) => child.seedId),
      [extra, c, a, b],
    );
    t.like(created.body.planRun, { source: 'issues', planId: null, dispatcherHandle: 'nightly-bot' });

    const failed = await waitForPlanState(created.body.planRun.id);
    t.like(failed.planRun, { state: 'failed', failureReason: 'child_crashed' });
    t.deepEqual(
      failed.children.map((child: { state: string }) => child.state),
      ['skipped', 'merged', 'failed', 'pending'],
    );
    t.is(failed.children[0].runId, null);
    t.is(failed.children[2].failureReason, 'child_crashed');
    // Spectators see the plan-run and its children without failure detail (docs/security.md).
    const spectated = (await svc.request('GET', `/plan-runs/${created.body.planRun.id}`, { token: null })).body;
    t.like(spectated.planRun, { state: 'failed' });
    t.false('failureReason' in spectated.planRun);
    t.deepEqual(
      spectated.children.map((child: Record<string, unknown>) => [child.state, 'failureReason' in child]),
      failed.children.map((child: { state: string }) => [child.state, false]),
    );
    const mergedRun = failed.children[1].runId;
    const failedRun = failed.children[2].runId;

    setSwitch(fixture, 'fail', a, false);
    const resumed = await svc.request('POST', `/plan-runs/${created.body.planRun.id}/resume`, {
      body: { reason: 'fixed the flaky step' },
    });
    t.is(resumed.status, 200, JSON.stringify(resumed.body));
    t.like(resumed.body, {
      planRun: { state: 'running' },
      resumedChild: { seq: 3, runId: null },
      reason: 'child_crashed',
    });
    t.truthy(resumed.body.planRun.resumedAt);
    const done = await waitForPlanState(created.body.planRun.id);
    t.is(done.planRun.state, 'succeeded', JSON.stringify(done));
    t.deepEqual(
      done.children.map((child: { state: string }) => child.state),
      ['skipped', 'merged', 'merged', 'merged'],
    );
    t.is(done.children[1].runId, mergedRun, 'the merged child was not run again');
    t.not(done.children[2].runId, failedRun, 'the failed child was dispatched afresh');
    t.is(done.planRun.failureReason, null);
    const resumedEvent = (await svc.request('GET', `/plan-runs/${created.body.planRun.id}/events`)).text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .find((event) => event.kind === 'plan_run.resumed');
    t.like(resumedEvent?.payload, { reason: 'child_crashed', note: 'fixed the flaky step' });
    const again = await svc.request('POST', `/plan-runs/${created.body.planRun.id}/resume`, { body: {} });
    t.is(again.status, 409);
    t.is(again.body.error.code, 'state_transition_error');
  },
);

test.serial('a transient provider error is retried once with a fresh run', async (t) => {
  const seed = fixture.github.createSeed('acme', 'planned', 'Flaky provider');
  fixture.github.pushAll('acme', 'planned', 'one more seed');
  setSwitch(fixture, 'flaky', seed);
  const created = await svc.request('POST', '/plan-runs', {
    body: { project, agent: 'shell', issues: [seed], promptTemplate: fixture.template },
  });
  const done = await waitForPlanState(created.body.planRun.id);
  t.is(done.planRun.state, 'succeeded', JSON.stringify(done));
  t.is(done.children[0].state, 'merged');
  const events = (await svc.request('GET', `/plan-runs/${created.body.planRun.id}/events`)).text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  const retried = events.find((event) => event.kind === 'plan_run.child_retried');
  t.like(retried?.payload, { failureReason: 'provider_error', retryCount: 1 });
  t.not(retried.payload.previousRunId, done.children[0].runId);
  t.like((await svc.request('GET', `/runs/${retried.payload.previousRunId}`)).body.run, {
    state: 'failed',
    failureReason: 'provider_error',
  });
});

test.serial('a child that changes nothing is a trivial merge and the plan goes on', async (t) => {
  const [empty, full] = ['Already done', 'Still to do'].map((title) =>
    fixture.github.createSeed('acme', 'planned', title),
  );
  fixture.github.pushAll('acme', 'planned', 'two more seeds');
  setSwitch(fixture, 'empty', empty!);
  const created = await svc.request('POST', '/plan-runs', {
    body: { project, agent: 'shell', issues: [empty, full], promptTemplate: fixture.template },
  });
  const done = await waitForPlanState(created.body.planRun.id);
  t.is(done.planRun.state, 'succeeded', JSON.stringify(done));
  t.deepEqual(
    done.children.map((child: { state: string }) => child.state),
    ['merged', 'merged'],
  );
  t.truthy(done.children[0].prMergedAt);
  const emptyRun = (await svc.request('GET', `/runs/${done.children[0].runId}`)).body.run;
  t.like(emptyRun, { state: 'succeeded', prUrl: null, commitsAhead: 0 });
  const events = (await svc.request('GET', `/plan-runs/${created.body.planRun.id}/events`)).text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  const merged = events.filter((event) => event.kind === 'plan_run.merged').map((event) => event.payload);
  t.like(merged[0], { mergedChildSeq: 1, trivial: true, prUrl: null });
  t.like(merged[1], { mergedChildSeq: 2 });
  t.falsy(merged[1].trivial);
});

test.serial('bad requests are rejected in the documented order and write nothing', async (t) => {
  const before = (await svc.request('GET', '/plan-runs')).body.planRuns.length;
  const open = fixture.github.createSeed('acme', 'planned', 'Still open');
  const cases: [string, Record<string, unknown>, number, string][] = [
    ['no body fields', {}, 400, 'validation_error'],
    [
      'planId and issues',
      { project, agent: 'shell', planId: fixture.planId, issues: [fixture.seeds[0]] },
      400,
      'validation_error',
    ],
    ['neither planId nor issues', { project, agent: 'shell' }, 400, 'validation_error'],
    [
      'duplicate issues',
      { project, agent: 'shell', issues: [fixture.seeds[0], fixture.seeds[0]] },
      400,
      'validation_error',
    ],
    ['negative cap', { project, agent: 'shell', planId: fixture.planId, maxCostUsd: -1 }, 400, 'validation_error'],
    ['unknown project', { project: 'prj_000000000000', agent: 'shell', planId: fixture.planId }, 404, 'not_found'],
    [
      'template without {seed_id}',
      { project, agent: 'nobody', planId: fixture.planId, promptTemplate: 'do it' },
      400,
      'validation_error',
    ],
    ['unknown plan', { project, agent: 'shell', planId: 'pl-nope' }, 400, 'validation_error'],
    ['unknown issue', { project, agent: 'shell', issues: ['nope-0000'] }, 400, 'validation_error'],
    ['every child closed', { project, agent: 'shell', planId: fixture.planId }, 400, 'plan_has_no_open_children'],
    ['unknown agent', { project, agent: 'nobody', issues: [open] }, 404, 'not_found'],
  ];
  // The plan's seeds are all merged by now, but not closed: close them for the "every child closed" case.
  for (const seed of fixture.seeds) fixture.github.sd('acme', 'planned', 'close', seed);
  fixture.github.pushAll('acme', 'planned', 'close the plan');
  for (const [name, body, status, code] of cases) {
    const response = await svc.request('POST', '/plan-runs', { body });
    t.is(response.status, status, `${name}: ${JSON.stringify(response.body)}`);
    t.is(response.body.error?.code, code, name);
  }
  const bare = (await svc.request('POST', '/projects', { body: { gitUrl: 'https://github.com/acme/unseeded' } })).body
    .project.id;
  const lacking = await svc.request('POST', '/plan-runs', { body: { project: bare, agent: 'shell', issues: ['x-1'] } });
  t.like(lacking, { status: 400, body: { error: { code: 'project_lacks_seeds' } } });
  t.is((await svc.request('GET', '/plan-runs')).body.planRuns.length, before, 'nothing was written');
  t.is((await svc.request('GET', '/plan-runs?state=bogus')).status, 400);
  t.is((await svc.request('GET', '/plan-runs/plnr_000000000000')).status, 404);
});
