// GET /analytics/runs and /analytics/cost on both databases: runs with known states, costs, tokens,
// timings, PRs, plan-runs and steering are written straight to a read model, and every aggregate
// the service answers (computed in SQL) is checked against numbers worked out by hand.
import test from 'ava';
import type { Context } from 'koa';
import { OPERATOR, SPECTATOR } from '../../api/auth.ts';
import { ApiError } from '../../api/errors.ts';
import { parseOrThrow } from '../../api/route.ts';
import { analyticsRoutes } from '../../api/routes/analytics.router.ts';
import {
  analyticsQuery,
  runAnalyticsSchema,
  spectatorRunAnalyticsSchema,
  type AnalyticsQuery,
} from '../../api/routes/analytics.schema.ts';
import { DATABASE_LEGS, postgresOrSkip } from '../support/env.ts';
import { bucket, dist, perPr, seedAnalyticsRuns, spectators, tokens, WINDOW } from './analytics-fixture.ts';
import { analyticsLegs, conforms } from './analytics-legs.ts';

const legs = analyticsLegs(seedAnalyticsRuns);
const openLeg = legs.open;
test.after.always(legs.closeAll);

for (const leg of DATABASE_LEGS) {
  test(`${leg}: run analytics — totals, distributions, daily series and per-group buckets`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    const { service } = await openLeg(leg);
    const analytics = await service.runs(WINDOW);
    t.deepEqual(analytics.filter, {
      projectId: null,
      from: '2026-11-10T00:00:00.000Z',
      to: '2026-11-12T23:59:59.999Z',
    });
    t.deepEqual(analytics.totals, {
      runs: 7,
      succeeded: 3,
      failed: 2,
      cancelled: 1,
      active: 1,
      successRate: 0.5,
      prStateKnown: 3,
      prsMerged: 2,
      mergedPrRate: 2 / 3,
      durationMs: dist(320_000, 300_000, 600_000, 5),
      queueWaitMs: dist(35_000, 30_000, 60_000, 6),
      tokens: tokens(1610, 800, 30, 15),
      costUsd: dist(9.25 / 6, 1, 4, 6),
      cost: { total: 9.25, avg: 9.25 / 6, priced: 6 },
    });
    t.deepEqual(analytics.timeSeries, [
      { key: '2026-11-10', runs: 2, succeeded: 1, failed: 1, cancelled: 0, active: 0 },
      { key: '2026-11-11', runs: 1, succeeded: 1, failed: 0, cancelled: 0, active: 0 },
      { key: '2026-11-12', runs: 4, succeeded: 1, failed: 1, cancelled: 1, active: 1 },
    ]);
    t.deepEqual(analytics.byAgent, [
      bucket('builder', [5, 2, 2, 0], [2, 2], [1310, 650, 10, 5], [7.25, 5], 325_000, [0.5, 1]),
      bucket('reviewer', [2, 1, 0, 1], [1, 0], [300, 150, 20, 10], [2, 1], 300_000, [0.5, 0]),
    ]);
    const byModelOrProvider = (first: string, second: string) => [
      bucket(first, [4, 1, 2, 0], [1, 1], [310, 150, 10, 5], [3.25, 4], 300_000, [1 / 3, 1]),
      bucket(second, [2, 2, 0, 0], [2, 1], [1300, 650, 20, 10], [6, 2], 350_000, [1, 0.5]),
      bucket('__none__', [1, 0, 0, 1], [0, 0], [0, 0, 0, 0], [0, 0], null, [0, null]),
    ];
    t.deepEqual(analytics.byModel, byModelOrProvider('m-a', 'm-b'));
    t.deepEqual(analytics.byProvider, byModelOrProvider('anthropic', 'openai'));
    t.deepEqual(analytics.byFailureReason, [
      { key: 'crashed', runs: 1 },
      { key: 'timed_out', runs: 1 },
    ]);
    t.true(conforms(runAnalyticsSchema, analytics), 'the operator shape the document states');
  });

  test(`${leg}: run analytics — landed work: cost per merged PR, time to merge, steering`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    const { outcomes } = await (await openLeg(leg)).service.runs(WINDOW);
    t.deepEqual(outcomes.costPerMergedPr, {
      overall: perPr(undefined, [9.25, 6, 3, 2], 4.625),
      byAgent: [perPr('builder', [7.25, 5, 2, 2], 3.625), perPr('reviewer', [2, 1, 1, 0], null)],
      byModel: [
        perPr('m-b', [6, 2, 2, 1], 6),
        perPr('m-a', [3.25, 4, 1, 1], 3.25),
        perPr('__none__', [0, 0, 0, 0], null),
      ],
      byProvider: [
        perPr('openai', [6, 2, 2, 1], 6),
        perPr('anthropic', [3.25, 4, 1, 1], 3.25),
        perPr('__none__', [0, 0, 0, 0], null),
      ],
      byProject: [
        perPr('P1', [7, 4, 2, 2], 3.5),
        perPr('P2', [2, 1, 1, 0], null),
        perPr('__none__', [0.25, 1, 0, 0], null),
      ],
    });
    t.is(outcomes.costPerMergedPr.overall.costPerMergedPrUsd, 4.625);
    t.deepEqual(outcomes.timeToMergeMs, dist(5_400_000, 3_600_000, 7_200_000, 2));
    t.deepEqual(outcomes.steering, {
      steered: { runs: 2, terminal: 2, succeeded: 1, successRate: 0.5, prStateKnown: 1, prsMerged: 1, mergedPrRate: 1 },
      unsteered: {
        runs: 5,
        terminal: 4,
        succeeded: 2,
        successRate: 0.5,
        prStateKnown: 2,
        prsMerged: 1,
        mergedPrRate: 0.5,
      },
    });
  });

  test(`${leg}: cost analytics — totals, every breakdown, cost bases`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    const { service, repository } = await openLeg(leg);
    const cost = await service.cost(WINDOW);
    const b = (key: string, costUsd: number, runs: number, priced: number) => ({ key, costUsd, runs, priced });
    t.deepEqual(cost, {
      filter: { projectId: null, from: '2026-11-10T00:00:00.000Z', to: '2026-11-12T23:59:59.999Z' },
      totals: { runs: 7, priced: 6, costUsd: 9.25 },
      breakdowns: {
        date: [b('2026-11-10', 2, 2, 2), b('2026-11-11', 2, 1, 1), b('2026-11-12', 5.25, 4, 3)],
        project: [b('P1', 7, 4, 4), b('P2', 2, 2, 1), b('__none__', 0.25, 1, 1)],
        plan: [b('plan-1', 5.5, 2, 2), b('__none__', 3.75, 5, 4)],
        run: [
          b('r6', 4, 1, 1),
          b('r3', 2, 1, 1),
          b('r1', 1.5, 1, 1),
          b('r7', 1, 1, 1),
          b('r2', 0.5, 1, 1),
          b('r5', 0.25, 1, 1),
        ],
        agent: [b('builder', 7.25, 5, 5), b('reviewer', 2, 2, 1)],
        model: [b('m-b', 6, 2, 2), b('m-a', 3.25, 4, 4), b('__none__', 0, 1, 0)],
        provider: [b('openai', 6, 2, 2), b('anthropic', 3.25, 4, 4), b('__none__', 0, 1, 0)],
      },
      byCostBasis: [
        { key: 'api', runs: 5, costUsd: 7.25 },
        { key: 'subscription_estimate', runs: 1, costUsd: 2 },
        { key: 'unpriced', runs: 1, costUsd: 0 },
      ],
      // The PRs svc answered with rounds, in the window (r8's is older): each opening run's total.
      pullRequests: {
        prs: 2,
        rounds: 3,
        costUsd: 8.25,
        costliest: [
          { key: 'r6', costUsd: 4.75, rounds: 1 },
          { key: 'r1', costUsd: 3.5, rounds: 2 },
        ],
      },
    });
    const scope = { fromMs: Date.UTC(2026, 10, 10), toMs: Date.UTC(2026, 10, 12, 23, 59, 59, 999) };
    t.deepEqual(await repository.costliestRuns(scope, 2), [
      { id: 'r6', costUsd: 4 },
      { id: 'r3', costUsd: 2 },
    ]);
    t.deepEqual((await service.cost({ ...WINDOW, projectId: 'P2' })).totals, { runs: 2, priced: 1, costUsd: 2 });
  });

  test(`${leg}: spectators see only visible projects and no USD figure`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    const { service } = await openLeg(leg);
    const visible = await spectators.visibleProjects();
    const analytics = await service.runsForSpectator(WINDOW, visible);
    t.deepEqual(analytics.totals, {
      runs: 4,
      succeeded: 2,
      failed: 2,
      cancelled: 0,
      active: 0,
      successRate: 0.5,
      prStateKnown: 2,
      prsMerged: 2,
      mergedPrRate: 1,
      durationMs: dist(325_000, 200_000, 600_000, 4),
      queueWaitMs: dist(35_000, 20_000, 60_000, 4),
      tokens: tokens(1300, 650, 10, 5),
    });
    const {
      costUsd: _cost,
      priced: _priced,
      ...builder
    } = bucket('builder', [4, 2, 2, 0], [2, 2], [1300, 650, 10, 5], [0, 0], 325_000, [0.5, 1]);
    t.deepEqual(analytics.byAgent, [builder]);
    t.false('costPerMergedPr' in analytics.outcomes);
    t.false(JSON.stringify(analytics).includes('cost'), 'no cost member anywhere');
    t.true(conforms(spectatorRunAnalyticsSchema, analytics));
    t.false(conforms(runAnalyticsSchema, analytics), 'the two documented shapes are told apart');
    const hidden = await service.runsForSpectator({ ...WINDOW, projectId: 'P2' }, visible);
    t.is(hidden.totals.runs, 0, "a hidden project's runs are not counted");
    t.deepEqual(hidden.totals.durationMs, dist(null, null, null, 0));
    t.deepEqual(hidden.outcomes.steering.steered.successRate, null);
    t.deepEqual(hidden.timeSeries, []);
  });

  test(`${leg}: the route answers a spectator's copy and the operator's view`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    const [runsRoute, costRoute] = analyticsRoutes((await openLeg(leg)).service, spectators);
    const call = (route: typeof runsRoute, identity: typeof OPERATOR, query: AnalyticsQuery) =>
      route!.handler({ params: undefined, query, body: undefined, identity, ctx: {} as Context });
    const spectator = await call(runsRoute, SPECTATOR, WINDOW);
    t.is(spectator.status, 200);
    t.is((spectator.body as { totals: { runs: number } }).totals.runs, 4);
    t.true(conforms(spectatorRunAnalyticsSchema, spectator.body));
    const operator = await call(runsRoute, OPERATOR, WINDOW);
    t.is((operator.body as { totals: { runs: number } }).totals.runs, 7);
    t.true(conforms(runAnalyticsSchema, operator.body));
    t.is(costRoute!.auth, 'readOperator');
    t.is(runsRoute!.auth, 'readPublic');
  });

  test(`${leg}: the window — defaults, inclusive bounds, date-only days, the 90-day cap`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    const { service } = await openLeg(leg);
    const runsIn = async (query: AnalyticsQuery) => {
      const { filter, totals } = await service.cost(query);
      return { from: filter.from, to: filter.to, runs: totals.runs, costUsd: totals.costUsd };
    };
    t.deepEqual(
      await runsIn({}),
      { from: '2026-10-13T12:00:00.000Z', to: '2026-11-12T12:00:00.000Z', runs: 7, costUsd: 9.25 },
      'to defaults to now, from to 30 days before',
    );
    t.deepEqual(await runsIn({ to: '2026-11-12' }), {
      from: '2026-10-13T23:59:59.999Z',
      to: '2026-11-12T23:59:59.999Z',
      runs: 7,
      costUsd: 9.25,
    });
    t.deepEqual(
      await runsIn({ from: '2026-01-01', to: '2026-11-12' }),
      { from: '2026-08-14T23:59:59.999Z', to: '2026-11-12T23:59:59.999Z', runs: 8, costUsd: 109.25 },
      'a span over 90 days pulls from forward: the run 91 days back is out, the one 42 days back in',
    );
    t.is((await runsIn({ from: '2026-11-10T01:00:00Z', to: '2026-11-11T23:59:59.999Z' })).runs, 3, 'both ends count');
    t.is((await runsIn({ from: '2026-11-10T01:00', to: '2026-11-11T23:59:59.999Z' })).runs, 3, 'zoneless is UTC');
    t.is((await runsIn({ from: '2026-11-10T02:00:00.001+01:00', to: '2026-11-11' })).runs, 2, 'an offset applies');
    t.is((await runsIn({ from: '2026-11-11', to: '2026-11-11' })).runs, 1, 'a date covers its whole UTC day');
  });

  test(`${leg}: a bad date is a validation error, from the schema or from the service`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    const { service } = await openLeg(leg);
    for (const query of [
      { from: '2026-02-30' },
      { to: '2026-13-01' },
      { from: '2026-11-10T24:00Z' },
      { from: 'yesterday' },
      { from: '2026-11-12', to: '2026-11-11' },
    ]) {
      const error = await t.throwsAsync(service.runs(query), { instanceOf: ApiError }, JSON.stringify(query));
      t.is(error?.code, 'validation_error');
      t.is(error?.status, 400);
    }
    for (const query of [{ from: 'yesterday' }, { to: '2026-11-12 10:00' }, { window: '7d' }])
      t.is(
        t.throws(() => parseOrThrow(analyticsQuery, query, 'query'), { instanceOf: ApiError })?.code,
        'validation_error',
      );
    t.deepEqual(parseOrThrow(analyticsQuery, { from: '2026-11-10', projectId: 'P1' }, 'query'), {
      from: '2026-11-10',
      projectId: 'P1',
    });
  });
}
