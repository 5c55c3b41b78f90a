// `svc analytics <runs|cost|dispatch|behavior>` and `svc ops [instance]` as a user runs them: real
// `svc` processes against a running server (API only: the seeded runs have no workflows for a
// reconciler to repair), on SQLite and PostgreSQL, in ndjson and pretty, with their exit codes.
import test from 'ava';
import { seedAnalyticsEvents } from '../api/analytics-events-fixture.ts';
import { seedAnalyticsRuns } from '../api/analytics-fixture.ts';
import { remote, svcCli } from '../support/cli.ts';
import { DATABASE_LEGS, postgresOrSkip } from '../support/env.ts';
import { startTestStack } from '../support/stack.ts';

const WINDOW = ['--from', '2026-11-10', '--to', '2026-11-12'];

for (const leg of DATABASE_LEGS) {
  test.serial(`${leg}: svc analytics and svc ops, ndjson and pretty, and their exit codes`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    const svc = await startTestStack({ database: leg, worker: false });
    t.teardown(() => svc.stop());
    const em = svc.stack.readModel.em();
    await seedAnalyticsRuns(em);
    await seedAnalyticsEvents(em);
    const cli = async (...args: string[]) => {
      const result = await svcCli([...args, ...remote(svc)]);
      t.is(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
      return result;
    };
    const lines = async (...args: string[]) => (await cli(...args, '--output', 'pretty')).stdout.trimEnd().split('\n');

    const runs = await cli('analytics', 'runs', ...WINDOW);
    t.is(runs.lines.length, 1, 'the answer as one JSON line');
    t.like(runs.lines[0], { totals: { runs: 7, succeeded: 3, failed: 2 }, filter: { projectId: null } });
    const runsText = await lines('analytics', 'runs', ...WINDOW);
    t.is(runsText[0], 'runs: 2026-11-10T00:00:00.000Z → 2026-11-12T23:59:59.999Z, all projects');
    t.is(runsText[1], '7 runs: 3 succeeded, 2 failed, 1 cancelled, 1 active — success 50%, merged PRs 2/3 (67%)');
    t.true(
      runsText.some((line) => /^builder\s+5\s+50%\s+2\/2\s+1975\s+\$7\.25\s+5\.4m$/.test(line)),
      runsText.join('\n'),
    );
    t.is(runsText.at(-1), 'failures: crashed 1, timed_out 1');

    const cost = await lines('analytics', 'cost', ...WINDOW, '--project', 'P1');
    t.is(cost[1], '$7.00 over 4 runs (4 priced)');
    t.regex(cost[2]!, /^BY\s+KEY\s+COST\s+RUNS\s+PRICED$/);
    t.true(cost.some((line) => /^plan\s+plan-1\s+\$5\.50\s+2\s+2$/.test(line)));

    const dispatch = await cli('analytics', 'dispatch', ...WINDOW);
    t.like(dispatch.lines[0], { totals: { runs: 7, retries: 3 }, queue: { depth: 1, running: 1 } });
    const dispatchText = await lines('analytics', 'dispatch', ...WINDOW);
    t.is(dispatchText[1], '7 runs: 1 active, 2 plan-run children, 2 seeded, 2 cost-capped, 3 retries or clones');
    t.regex(
      dispatchText[2]!,
      /^queue now: 1 queued \(oldest waiting \d+\.\dd\), 1 running; wait median 30\.0s, p95 1\.0m \(6\)$/,
    );
    t.true(dispatchText.some((line) => /^retry\s+plan_retry\s+1\s+14%\s+0\s+100%\s+50\.0s$/.test(line)));

    const behavior = await cli('analytics', 'behavior', ...WINDOW);
    t.like(behavior.lines[0], { truncated: false, mining: { scannedRuns: 7, toolCalls: 11 } });
    const behaviorText = await lines('analytics', 'behavior', ...WINDOW);
    t.deepEqual(behaviorText.slice(1, 4), [
      'examined 7 of 7 runs: 19 events of 4 kinds, 11 tool calls, 3 steering messages, 40 files changed',
      '- Edit is the most used tool: 36% of 11 tool calls, in 2 runs.',
      '- api/routes takes 50% of the file edits (3 edits in 2 runs).',
    ]);
    t.true(behaviorText.some((line) => /^api\/routes\s+3\s+2\s+2\s+50%$/.test(line)));
    t.true(behaviorText.some((line) => /^changesize\s+unmeasured\s+3\s+0%\s+0\/0$/.test(line)));

    const ops = await cli('ops', '--window', '30d');
    t.like(ops.lines[0], { window: '30d', services: { dbReachable: true, temporalReachable: true } });
    const opsText = await lines('ops');
    t.regex(opsText[0]!, /^ops overview, last 24h \(at \S+\)$/);
    const perState = ['queued', 'running', 'succeeded', 'failed', 'cancelled'].map((state) => `${state} \\d+`);
    t.regex(opsText[1]!, new RegExp(`^runs: \\d+ created — ${perState.join(', ')}; 2 queued or running now$`));
    t.regex(opsText[4]!, new RegExp(`^services: runtime local, ${leg} reachable, Temporal reachable, streams`));
    const instance = await lines('ops', 'instance');
    t.regex(instance[0]!, /^svc \S+ — runtime local, auth token, no public URL$/);
    t.regex(instance[1]!, new RegExp(`^database ${leg}, up `));

    // Mistakes: a malformed date is refused before any request (2), an impossible one by the
    // server (400: 2), a wrong token is 4, an unreachable server 3.
    const bad = await svcCli(['analytics', 'runs', '--from', 'yesterday', ...remote(svc)]);
    t.is(bad.code, 2);
    const impossible = await svcCli(['analytics', 'dispatch', '--from', '2026-02-30', ...remote(svc)]);
    t.is(impossible.code, 2);
    t.regex(impossible.stderr, /^svc: \[validation_error\] invalid from/);
    t.is((await svcCli(['ops', '--window', '1y', ...remote(svc)])).code, 2);
    t.is((await svcCli(['analytics', 'behavior', `--url=${svc.url}`, '--token=wrong-token'])).code, 4);
    t.is((await svcCli(['ops', 'instance', '--url=http://127.0.0.1:9'])).code, 3);
  });
}
