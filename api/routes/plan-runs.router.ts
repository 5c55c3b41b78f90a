// Plan-runs: create, list, read, cancel, resume, and the union of their children's events.
import { defineRoute } from '../route.ts';
import { presentRun } from '../presenters/run.presenter.ts';
import type { PlanRunsService } from '../services/plan-runs.service.ts';
import type { RunEventsService } from '../services/run-events.service.ts';
import type { RunLinks } from '../presenters/links.ts';
import { Spectators } from '../presenters/spectator.ts';
import { eventLineSchema } from './runs.schema.ts';
import {
  cancelPlanRunBody,
  cancelPlanRunResponse,
  createPlanRunBody,
  createPlanRunResponse,
  getPlanRunResponse,
  listPlanRunsQuery,
  listPlanRunsResponse,
  planRunEventsQuery,
  planRunIdParams,
  resumePlanRunBody,
  resumePlanRunResponse,
} from './plan-runs.schema.ts';

export function planRunsRoutes(
  planRuns: PlanRunsService,
  events: RunEventsService,
  links: RunLinks,
  spectators: Spectators,
) {
  return [
    defineRoute({
      method: 'post',
      path: '/plan-runs',
      auth: 'dispatch',
      summary: 'Dispatch a plan-run: one run per seed, strictly one after another',
      tags: ['plan-runs'],
      body: createPlanRunBody,
      bodyRequired: true,
      responses: {
        201: { description: 'The plan-run, queued, and its pending children', schema: createPlanRunResponse },
      },
      handler: async ({ body }) => {
        const created = await planRuns.create(body);
        return { status: 201, body: { ...created, links: links('planRun', created.planRun.id) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/plan-runs',
      auth: 'readPublic',
      summary: 'List plan-runs, newest first',
      tags: ['plan-runs'],
      query: listPlanRunsQuery,
      responses: { 200: { description: 'The plan-runs', schema: listPlanRunsResponse } },
      handler: async ({ query, identity }) => {
        if (!Spectators.is(identity)) return { status: 200, body: await planRuns.list(query) };
        const { planRuns: rows } = await planRuns.list(query, await spectators.visibleProjects());
        return { status: 200, body: { planRuns: rows.map(Spectators.planRun) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/plan-runs/{id}',
      auth: 'readPublic',
      summary: 'One plan-run with its children and their runs',
      tags: ['plan-runs'],
      params: planRunIdParams,
      responses: { 200: { description: 'The plan-run', schema: getPlanRunResponse } },
      handler: async ({ params, identity }) => {
        const { planRun, children, runs } = await planRuns.get(params.id);
        await spectators.assertVisible(identity, planRun.projectId, `plan-run "${params.id}"`);
        if (Spectators.is(identity))
          return {
            status: 200,
            body: {
              planRun: Spectators.planRun(planRun),
              children: children.map(Spectators.planRunChild),
              runs: await spectators.runs(runs.map(presentRun)),
              links: links('planRun', params.id, true),
            },
          };
        return {
          status: 200,
          body: { planRun, children, runs: runs.map(presentRun), links: links('planRun', params.id) },
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/plan-runs/{id}/cancel',
      auth: 'dispatch',
      summary: 'Cancel a plan-run and its in-flight child run',
      tags: ['plan-runs'],
      params: planRunIdParams,
      body: cancelPlanRunBody,
      responses: { 200: { description: 'The plan-run after the cancel', schema: cancelPlanRunResponse } },
      handler: async ({ params, body }) => ({
        status: 200,
        body: await planRuns.cancel(params.id, body?.reason ?? null),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/plan-runs/{id}/resume',
      auth: 'dispatch',
      summary: 'Resume a failed or cancelled plan-run from its first unfinished child',
      tags: ['plan-runs'],
      params: planRunIdParams,
      body: resumePlanRunBody,
      responses: {
        200: { description: 'The resumed plan-run and the child it goes on with', schema: resumePlanRunResponse },
      },
      handler: async ({ params, body }) => ({ status: 200, body: await planRuns.resume(params.id, body?.reason) }),
    }),
    defineRoute({
      method: 'get',
      path: '/plan-runs/{id}/events',
      auth: 'readPublic',
      summary: 'The events of every child run of the plan-run as NDJSON (follow=1: live until the plan-run ends)',
      tags: ['plan-runs'],
      params: planRunIdParams,
      query: planRunEventsQuery,
      responses: {
        200: { description: 'One event per line', schema: eventLineSchema, contentType: 'application/x-ndjson' },
      },
      handler: async ({ params, query, ctx, identity }) => {
        const { planRun } = await planRuns.get(params.id);
        await spectators.assertVisible(identity, planRun.projectId, `plan-run "${params.id}"`);
        const spectator = Spectators.is(identity);
        const follow = !spectator && (query.follow ?? false);
        const controller = events.streams.open(follow);
        ctx.res.once('close', () => controller.abort());
        const lines = events.planStream(params.id, follow, controller.signal);
        return {
          status: 200,
          headers: { 'Content-Type': 'application/x-ndjson', 'Cache-Control': 'no-store' },
          body: spectators.eventLines(identity, lines),
        };
      },
    }),
  ];
}
