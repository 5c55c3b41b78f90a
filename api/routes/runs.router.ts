import { defineRoute } from '../route.ts';
import { presentRun } from '../presenters/run.presenter.ts';
import type { RunsService } from '../services/runs.service.ts';
import { dispatchRunBody, dispatchRunResponse, getRunResponse, listRunsQuery, listRunsResponse, runIdParams } from './runs.schema.ts';

export function runsRoutes(runs: RunsService) {
  return [
    defineRoute({
      method: 'post',
      path: '/runs',
      auth: 'dispatch',
      summary: 'Dispatch a run of a named agent',
      tags: ['runs'],
      body: dispatchRunBody,
      bodyRequired: true,
      responses: { 201: { description: 'The run, queued, and its sandbox', schema: dispatchRunResponse } },
      handler: async ({ body }) => {
        const { run, sandbox } = await runs.dispatch(body);
        return { status: 201, body: { run: presentRun(run), sandbox } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/runs',
      auth: 'readPublic',
      summary: 'List runs, newest first',
      tags: ['runs'],
      query: listRunsQuery,
      responses: { 200: { description: 'A page of runs', schema: listRunsResponse } },
      handler: async ({ query }) => {
        const page = await runs.list(query);
        return { status: 200, body: { ...page, runs: page.runs.map(presentRun) } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/runs/{id}',
      auth: 'readPublic',
      summary: 'One run',
      tags: ['runs'],
      params: runIdParams,
      responses: { 200: { description: 'The run', schema: getRunResponse } },
      handler: async ({ params }) => ({ status: 200, body: { run: presentRun(await runs.get(params.id)) } }),
    }),
  ];
}
