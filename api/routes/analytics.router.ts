import { defineRoute } from '../route.ts';
import { Spectators } from '../presenters/spectator.ts';
import type { AnalyticsService } from '../services/analytics.service.ts';
import { behaviorAnalyticsResponse } from './analytics-behavior.schema.ts';
import { dispatchAnalyticsResponse } from './analytics-dispatch.schema.ts';
import { analyticsQuery, costAnalyticsResponse, runAnalyticsResponse } from './analytics.schema.ts';

export function analyticsRoutes(analytics: AnalyticsService, spectators: Spectators) {
  return [
    defineRoute({
      method: 'get',
      path: '/analytics/runs',
      auth: 'readPublic',
      summary: 'Run outcomes over a window: totals, daily series, per agent/model/provider, landed work',
      tags: ['analytics'],
      query: analyticsQuery,
      responses: {
        200: {
          description: 'Run analytics (spectators: their visible projects, no USD)',
          schema: runAnalyticsResponse,
        },
      },
      handler: async ({ query, identity }) => ({
        status: 200,
        body: Spectators.is(identity)
          ? await analytics.runsForSpectator(query, await spectators.visibleProjects())
          : await analytics.runs(query),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/analytics/cost',
      auth: 'readOperator',
      summary: 'Spend over a window: totals and breakdowns per day, project, plan-run, run, agent, model, provider',
      tags: ['analytics'],
      query: analyticsQuery,
      responses: { 200: { description: 'Cost analytics', schema: costAnalyticsResponse } },
      handler: async ({ query }) => ({ status: 200, body: await analytics.cost(query) }),
    }),
    defineRoute({
      method: 'get',
      path: '/analytics/dispatch',
      auth: 'readOperator',
      summary: "How the window's runs were dispatched (origin, retry kind, provider, model, agent) and the queue now",
      tags: ['analytics'],
      query: analyticsQuery,
      responses: { 200: { description: 'Dispatch analytics', schema: dispatchAnalyticsResponse } },
      handler: async ({ query }) => ({ status: 200, body: await analytics.dispatch(query) }),
    }),
    defineRoute({
      method: 'get',
      path: '/analytics/behavior',
      auth: 'readOperator',
      summary: "What the agents of the window's newest runs did: events, tools, directories, outcomes, waste",
      tags: ['analytics'],
      query: analyticsQuery,
      responses: { 200: { description: 'Behavior analytics (bounded scan)', schema: behaviorAnalyticsResponse } },
      handler: async ({ query }) => ({ status: 200, body: await analytics.behavior(query) }),
    }),
  ];
}
