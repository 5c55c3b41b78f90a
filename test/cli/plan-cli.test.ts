// The plan commands as a user runs them: real `svc` processes against a running server, on
// SQLite and PostgreSQL, in ndjson and pretty.
import test from 'ava';
import { remote, svcCli } from '../support/cli.ts';
import { DATABASE_LEGS, postgresOrSkip } from '../support/env.ts';
import { planFixture, setSwitch } from '../support/plan-fixture.ts';
import { waitFor } from '../support/processes.ts';
import { startTestStack } from '../support/stack.ts';

for (const leg of DATABASE_LEGS) {
  test.serial(`${leg}: plan run follows to the end; plan status, list and cancel`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    const fixture = await planFixture('acme', `plan-cli-${leg}`, ['One', 'Two']);
    const svc = await startTestStack({ database: leg, env: fixture.env });
    t.teardown(async () => {
      fixture.stopReviewer();
      await fixture.forge.stop();
      await svc.stop();
    });
    const project = (
      await svc.request('POST', '/projects', { body: { gitUrl: `https://github.com/acme/plan-cli-${leg}` } })
    ).body.project.id;

    const ran = await svcCli([
      'plan',
      'run',
      fixture.planId,
      '--project',
      project,
      '--agent',
      'shell',
      '--prompt-template',
      fixture.template,
      '--max-cost-usd',
      '3',
      ...remote(svc),
    ]);
    t.is(ran.code, 0, ran.stderr);
    const [dispatched, ...rest] = ran.lines;
    t.like(dispatched, {
      type: 'plan_run.dispatched',
      planRun: { state: 'queued', maxCostUsd: 3, planId: fixture.planId },
    });
    t.is(dispatched.children.length, 2);
    t.is(dispatched.links.dashboard, `${svc.url}/ui/plan-runs/${dispatched.planRun.id}`);
    t.true(rest.some((line) => line.type === 'plan_run.event' && line.kind === 'plan_run.merged'));
    t.like(rest.at(-1), {
      type: 'plan_run.terminal',
      planRunId: dispatched.planRun.id,
      state: 'succeeded',
      failureReason: null,
    });

    const status = await svcCli(['plan', 'status', dispatched.planRun.id, '--output', 'pretty', ...remote(svc)]);
    t.is(status.code, 0, status.stderr);
    const lines = status.stdout.trim().split('\n');
    t.is(
      lines[0],
      `plan-run ${dispatched.planRun.id} [succeeded] — project acme/plan-cli-${leg} (${project}), ` +
        `plan ${fixture.planId}, agent shell, 2 children`,
    );
    t.is(lines[1], `dashboard: ${svc.url}/ui/plan-runs/${dispatched.planRun.id}`);
    t.regex(lines[2]!, /^#\s+SEED\s+STATE\s+COST\s+DURATION\s+RUN$/);
    t.regex(lines[3]!, new RegExp(`^1\\s+${fixture.seeds[0]}\\s+merged\\s+—\\s+\\d+\\.\\d+s\\s+run_[0-9a-z]{12}$`));
    const raw = await svcCli(['plan', 'status', dispatched.planRun.id, ...remote(svc)]);
    t.is(raw.lines[0].runs.length, 2);

    // svc run names the project and prints the run's dashboard page, in both outputs.
    const oneShot = await svcCli(['run', 'shell', project, '-p', 'echo hi', '--output', 'pretty', ...remote(svc)]);
    const runId = /^run (run_[0-9a-z]{12}) dispatched/.exec(oneShot.stdout)?.[1];
    t.truthy(runId, oneShot.stdout + oneShot.stderr);
    const [spawned, dashboardLine] = oneShot.stdout.split('\n');
    t.is(spawned, `run ${runId} dispatched: agent shell, project acme/plan-cli-${leg} (${project})`);
    t.is(dashboardLine, `dashboard: ${svc.url}/ui/runs/${runId}`);
    const oneShotJson = await svcCli(['run', 'shell', project, '-p', 'echo hi', ...remote(svc)]);
    t.like(oneShotJson.lines[0], { type: 'run.spawned' });
    t.is(oneShotJson.lines[0].links.dashboard, `${svc.url}/ui/runs/${oneShotJson.lines[0].run.id}`);

    // A slow child to cancel, without following.
    const seed = fixture.github.createSeed('acme', `plan-cli-${leg}`, 'Slow one');
    fixture.github.pushAll('acme', `plan-cli-${leg}`, 'slow seed');
    setSwitch(fixture, 'slow', seed);
    const queued = await svcCli([
      'plan',
      'run',
      '--issues',
      seed,
      '--project',
      project,
      '--agent',
      'shell',
      '--prompt-template',
      fixture.template,
      '--no-follow',
      ...remote(svc),
    ]);
    t.is(queued.code, 0, queued.stderr);
    const slowId = queued.lines[0].planRun.id;
    t.is(queued.lines.length, 1);
    await waitFor(
      async () => (await svc.request('GET', `/plan-runs/${slowId}`)).body.children[0].state === 'running' || undefined,
      'the slow child to run',
      60_000,
    );
    const active = await svcCli(['plan', 'list', '--state', 'active', '--project', project, ...remote(svc)]);
    t.deepEqual(
      active.lines.map((line) => line.id),
      [slowId],
    );
    const byName = ['--project', `acme/plan-cli-${leg}`, '--output', 'json'];
    const named = await svcCli(['plan', 'list', '--state', 'active', ...byName, ...remote(svc)]);
    t.deepEqual(
      JSON.parse(named.stdout).map((plan: { id: string }) => plan.id),
      [slowId],
      'a project by owner/repo; --output json: one array',
    );
    const cancelled = await svcCli(['plan', 'cancel', slowId, '--reason', 'enough', ...remote(svc)]);
    t.is(cancelled.code, 0, cancelled.stderr);
    t.like(cancelled.lines[0], {
      type: 'plan_run.cancelled',
      planRun: { state: 'cancelled' },
      cancelledChild: { childSeq: 1 },
      alreadyTerminal: false,
    });
    const again = await svcCli(['plan', 'cancel', slowId, '--output', 'pretty', ...remote(svc)]);
    t.is(again.stdout.trim(), `plan-run ${slowId} had already ended (cancelled)`);

    const table = await svcCli(['plan', 'list', '--project', project, '--output', 'pretty', ...remote(svc)]);
    t.regex(table.stdout, new RegExp(`${slowId}\\s+cancelled`));
    t.regex(table.stdout, new RegExp(`${dispatched.planRun.id}\\s+succeeded`));

    // Usage mistakes exit 2; an unknown plan-run is a rejected request (2); a bad token is 4.
    t.is(
      (
        await svcCli([
          'plan',
          'run',
          fixture.planId,
          '--issues',
          seed,
          '--project',
          project,
          '--agent',
          'shell',
          ...remote(svc),
        ])
      ).code,
      2,
    );
    t.is((await svcCli(['plan', 'list', '--state', 'bogus', ...remote(svc)])).code, 2);
    t.is((await svcCli(['plan', 'status', 'plnr_000000000000', ...remote(svc)])).code, 2);
    t.is((await svcCli(['plan', 'status', slowId, `--url=${svc.url}`, '--token=wrong-token'])).code, 4);
    // A failing plan-run exits 1.
    const failing = fixture.github.createSeed('acme', `plan-cli-${leg}`, 'Failing one');
    fixture.github.pushAll('acme', `plan-cli-${leg}`, 'failing seed');
    setSwitch(fixture, 'fail', failing);
    const failed = await svcCli([
      'plan',
      'run',
      '--issues',
      failing,
      '--project',
      project,
      '--agent',
      'shell',
      '--prompt-template',
      fixture.template,
      '--output',
      'pretty',
      ...remote(svc),
    ]);
    t.is(failed.code, 1, failed.stdout);
    t.regex(failed.stdout.trim().split('\n').at(-1)!, /failed: child_crashed$/);
  });
}
