// GET /analytics/dispatch and /analytics/behavior on both databases: the runs of
// analytics-fixture.ts with a dispatch context (triggers, clones, a plan retry, seeds, caps), the
// run events of analytics-events-fixture.ts and a queued run, checked against numbers worked out
// by hand; the bounded scan; and both routes over HTTP in public mode (operators only: spectators
// 401, a run's token 403, a bad date 400). The insights' thresholds: analytics-insights.test.ts.
import test from 'ava';
import { createServer, type Server } from 'node:http';
import { mintRunToken } from '../../core/run-token.ts';
import { createApiApp } from '../../api/app.ts';
import { behaviorAnalyticsResponse } from '../../api/routes/analytics-behavior.schema.ts';
import { dispatchAnalyticsResponse } from '../../api/routes/analytics-dispatch.schema.ts';
import { analyticsRoutes } from '../../api/routes/analytics.router.ts';
import { AnalyticsService } from '../../api/services/analytics.service.ts';
import { DATABASE_LEGS, postgresOrSkip, type DatabaseLeg } from '../support/env.ts';
import { closeServer, listenOnLoopback } from '../support/loopback-server.ts';
import { mined, QUEUED_SINCE, seedAnalyticsEvents, side } from './analytics-events-fixture.ts';
import { dist, seedAnalyticsRuns, spectators, tokens, WINDOW } from './analytics-fixture.ts';
import { analyticsLegs, conforms, NOW } from './analytics-legs.ts';

const legs = analyticsLegs(async (em) => {
  await seedAnalyticsRuns(em);
  await seedAnalyticsEvents(em);
});
test.after.always(legs.closeAll);

/** An expected dispatch bucket of the 7 runs of the window. */
const d = (
  key: string,
  runs: number,
  [active, succeeded, failed, cancelled]: number[],
  rate: number,
  wait: number,
) => ({
  key,
  runs,
  share: runs / 7,
  active: active!,
  succeeded: succeeded!,
  failed: failed!,
  cancelled: cancelled!,
  successRate: rate,
  avgQueueWaitMs: wait,
});
for (const leg of DATABASE_LEGS) {
  test(`${leg}: dispatch analytics — origin, retry kind, provider, model, agent, context, queue`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    const { service } = await legs.open(leg);
    const dispatch = await service.dispatch(WINDOW);
    t.deepEqual(dispatch.totals, { runs: 7, active: 1, planChildren: 2, seeded: 2, costCapped: 2, retries: 3 });
    t.deepEqual(dispatch.byOrigin, [
      d('cli', 2, [1, 0, 1, 0], 0, 30_000),
      d('manual', 2, [0, 0, 1, 1], 0, 60_000),
      d('plan-run', 2, [0, 2, 0, 0], 1, 30_000),
      d('cron', 1, [0, 1, 0, 0], 1, 30_000),
    ]);
    t.deepEqual(dispatch.byRetryKind, [
      d('fresh', 4, [1, 1, 1, 1], 1 / 3, 70_000 / 3),
      d('continue', 1, [0, 0, 1, 0], 0, 60_000),
      d('replicate', 1, [0, 1, 0, 0], 1, 30_000),
      d('plan_retry', 1, [0, 1, 0, 0], 1, 50_000),
    ]);
    const byModelOrProvider = (first: string, second: string) => [
      d(first, 4, [1, 1, 2, 0], 1 / 3, 32_500),
      d(second, 2, [0, 2, 0, 0], 1, 40_000),
      { ...d('__none__', 1, [0, 0, 0, 1], 0, 0), avgQueueWaitMs: null },
    ];
    t.deepEqual(dispatch.byProvider, byModelOrProvider('anthropic', 'openai'));
    t.deepEqual(dispatch.byModel, byModelOrProvider('m-a', 'm-b'));
    t.deepEqual(dispatch.byAgent, [
      d('builder', 5, [1, 2, 2, 0], 0.5, 36_000),
      d('reviewer', 2, [0, 1, 0, 1], 0.5, 30_000),
    ]);
    t.deepEqual(dispatch.queue, {
      depth: 1,
      running: 1,
      oldestQueuedAgeMs: NOW - QUEUED_SINCE,
      waitMs: dist(35_000, 30_000, 60_000, 6),
    });
    t.true(conforms(dispatchAnalyticsResponse, dispatch));
    const p1 = await service.dispatch({ ...WINDOW, projectId: 'P1' });
    t.deepEqual(p1.totals, { runs: 4, active: 0, planChildren: 2, seeded: 2, costCapped: 1, retries: 2 });
    t.like(p1.queue, { depth: 1, running: 0 }, 'the queue of one project (r5 has none)');
    const p2 = await service.dispatch({ ...WINDOW, projectId: 'P2' });
    t.deepEqual(p2.queue, { depth: 0, running: 0, oldestQueuedAgeMs: null, waitMs: dist(30_000, 30_000, 30_000, 1) });
    const empty = await service.dispatch({ from: '2020-01-01', to: '2020-01-02' });
    t.deepEqual(
      empty.byRetryKind.map(({ key, runs, share }) => [key, runs, share]),
      [
        ['fresh', 0, null],
        ['continue', 0, null],
        ['replicate', 0, null],
        ['plan_retry', 0, null],
      ],
    );
  });

  test(`${leg}: behavior analytics — mining, directories, outcomes, context waste, insights`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    const behavior = await (await legs.open(leg)).service.behavior(WINDOW);
    t.deepEqual(Object.keys(behavior), [
      'filter',
      'mining',
      'directories',
      'insights',
      'outcomes',
      'contextWaste',
      'truncated',
    ]);
    t.deepEqual(behavior.mining, {
      windowRuns: 7,
      scannedRuns: 7,
      events: 19,
      eventKinds: 4,
      byKind: [
        mined('tool_use', 11, 5, 19),
        mined('log.stdout', 4, 3, 19),
        mined('steer.sent', 3, 2, 19),
        mined('log.stderr', 1, 1, 19),
      ],
      toolCalls: 11,
      tools: [
        mined('Edit', 4, 2, 11),
        mined('exec_command', 2, 1, 11),
        ...['Bash', 'Read', 'Write', 'edit', 'read'].map((name) => mined(name, 1, 1, 11)),
      ],
      steering: { messages: 3, steeredRuns: 2, delivered: 2, unread: 1, failed: 0 },
      changes: { measured: 4, filesChanged: 40, insertions: 530, deletions: 125, avgFilesChanged: 10 },
    });
    const dir = (key: string, edits: number, files: number, runs: number) => ({
      key,
      edits,
      files,
      runs,
      share: edits / 6,
    });
    t.deepEqual(behavior.directories, [
      dir('api/routes', 3, 2, 2),
      dir('(outside workspace)', 1, 1, 1),
      dir('.', 1, 1, 1),
      dir('web/src', 1, 1, 1),
    ]);
    t.deepEqual(behavior.outcomes, {
      bySteering: [side('steered', [2, 2, 1, 1, 1]), side('unsteered', [5, 4, 2, 2, 1])],
      byEditing: [side('edited', [4, 4, 2, 2, 1]), side('no_edits', [3, 2, 1, 1, 1])],
      byChangeSize: [
        side('none', [1, 1, 0, 0, 0]),
        side('small', [1, 1, 1, 1, 1]),
        side('medium', [1, 1, 1, 1, 0]),
        side('large', [1, 1, 1, 1, 1]),
        side('unmeasured', [3, 2, 0, 0, 0]),
      ],
    });
    t.deepEqual(behavior.contextWaste, {
      tokens: tokens(1610, 800, 30, 15),
      cacheReadShare: 30 / 1640,
      failedOrCancelled: { runs: 3, tokens: 300, costUsd: 1.5, tokenShare: 300 / 2455 },
      costlyFailures: { runs: 0, tokens: 0, costUsd: 0, thresholdTokens: 100_000 },
      byFailureReason: [
        { key: 'crashed', runs: 1, tokens: 300, costUsd: 0.5 },
        { key: 'timed_out', runs: 1, tokens: 0, costUsd: 1 },
      ],
    });
    t.deepEqual(behavior.insights, [
      {
        code: 'top_tool',
        severity: 'info',
        message: 'Edit is the most used tool: 36% of 11 tool calls, in 2 runs.',
        value: 4 / 11,
      },
      {
        code: 'hot_directory',
        severity: 'info',
        message: 'api/routes takes 50% of the file edits (3 edits in 2 runs).',
        value: 0.5,
      },
    ]);
    t.false(behavior.truncated);
    t.true(conforms(behaviorAnalyticsResponse, behavior));
    const p2 = await (await legs.open(leg)).service.behavior({ ...WINDOW, projectId: 'P2' });
    t.like(p2.mining, { windowRuns: 2, events: 3, toolCalls: 2 }, "only r3's events (r4 has none)");
    t.deepEqual(p2.directories, [{ key: 'web/src', edits: 1, files: 1, runs: 1, share: 1 }]);
  });

  test(`${leg}: behavior analytics — the scan stops at its cap and says so; costly failures`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    const { repository } = await legs.open(leg);
    const capped = await new AnalyticsService(repository, () => NOW, { maxRuns: 3, costlyFailureTokens: 250 }).behavior(
      WINDOW,
    );
    t.true(capped.truncated);
    t.like(capped.mining, { windowRuns: 7, scannedRuns: 3, events: 6, toolCalls: 4 }, 'the newest three: r5, r6, r7');
    t.deepEqual(
      capped.directories.map((row) => [row.key, row.edits]),
      [
        ['(outside workspace)', 1],
        ['api/routes', 1],
      ],
    );
    t.deepEqual(capped.contextWaste.costlyFailures, { runs: 0, tokens: 0, costUsd: 0, thresholdTokens: 250 });
    t.deepEqual(capped.insights[0], {
      code: 'scan_truncated',
      severity: 'warning',
      message: "Only the newest 3 of the window's 7 runs were examined.",
      value: 7,
    });
    const costly = await new AnalyticsService(repository, () => NOW, {
      maxRuns: 10,
      costlyFailureTokens: 250,
    }).behavior(WINDOW);
    t.false(costly.truncated);
    t.deepEqual(costly.contextWaste.costlyFailures, { runs: 1, tokens: 300, costUsd: 0.5, thresholdTokens: 250 });
    t.is(
      costly.insights.find((insight) => insight.code === 'costly_failures')?.message,
      '1 failed run had used more than 250 tokens each (300 tokens, $0.50 in all).',
    );
    const none = await new AnalyticsService(repository, () => NOW).behavior({ from: '2020-01-01', to: '2020-01-02' });
    t.deepEqual(none.insights, [
      { code: 'no_runs', severity: 'info', message: 'No run was created in this window.', value: 0 },
    ]);
    t.deepEqual(none.mining.byKind, []);
    t.is(none.contextWaste.cacheReadShare, null);
  });

  test(`${leg}: over HTTP in public mode — operators only, bad dates are 400`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    const url = await serve(leg);
    const token = 'operator-token-of-the-test';
    const get = async (path: string, bearer?: string) => {
      const response = await fetch(`${url}${path}`, { headers: bearer ? { authorization: `Bearer ${bearer}` } : {} });
      return { status: response.status, body: (await response.json()) as any };
    };
    for (const route of ['/analytics/dispatch', '/analytics/behavior']) {
      const operator = await get(`${route}?from=2026-11-10&to=2026-11-12`, token);
      t.is(operator.status, 200, route);
      t.is(operator.body.filter.from, '2026-11-10T00:00:00.000Z');
      for (const bad of ['from=yesterday', 'from=2026-02-30', 'from=2026-11-12&to=2026-11-11', 'window=7d']) {
        const refused = await get(`${route}?${bad}`, token);
        t.is(refused.status, 400, `${route}?${bad}`);
        t.is(refused.body.error.code, 'validation_error');
      }
      t.is((await get(route)).status, 401, 'a spectator (no credential) is asked for the operator token');
      t.is((await get(route, 'not-the-token')).status, 401);
      t.is((await get(route, mintRunToken(token, 'run_0123456789ab'))).status, 403, "a run's token");
    }
    t.is((await get('/analytics/runs')).status, 200, 'while the run analytics stay public');
  });
}

const servers: Server[] = [];
test.after.always(async () => {
  for (const server of servers) await closeServer(server);
});

/** The analytics routes of a leg behind the real middleware, in public mode. */
async function serve(leg: DatabaseLeg): Promise<string> {
  const { service } = await legs.open(leg);
  const app = createApiApp({
    auth: {
      operatorToken: 'operator-token-of-the-test',
      noAuth: false,
      publicMode: true,
      isRunActive: async () => true,
    },
    routes: analyticsRoutes(service, spectators),
    logger: { error: () => {} },
  });
  const server = createServer(app.callback());
  servers.push(server);
  return listenOnLoopback(server);
}
