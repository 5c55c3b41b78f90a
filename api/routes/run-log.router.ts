// GET /runs/{id}/log: the run's whole event log as text, one human line per event, streamed page by
// page from the read model (never held whole in memory). Auth and spectator rules are the events'.
import { z } from 'zod';
import { defineRoute } from '../route.ts';
import { presentLogLines } from '../presenters/run-log.presenter.ts';
import type { Spectators } from '../presenters/spectator.ts';
import type { RunEventsService } from '../services/run-events.service.ts';
import type { RunsService } from '../services/runs.service.ts';
import { runIdParams } from './runs.schema.ts';

export function runLogRoutes(runs: RunsService, events: RunEventsService, spectators: Spectators) {
  return [
    defineRoute({
      method: 'get',
      path: '/runs/{id}/log',
      auth: 'readPublic',
      summary: "The run's events as a text log: one human line per event, with its millisecond timestamp",
      tags: ['runs'],
      params: runIdParams,
      responses: {
        200: {
          description: '`<ISO timestamp> <out|err|svc|warn|error> <line>` per event; agent output made inert',
          schema: z.string(),
          contentType: 'text/plain',
        },
      },
      handler: async ({ params, ctx, identity }) => {
        const run = await runs.get(params.id);
        await spectators.assertVisible(identity, run.projectId, `run "${params.id}"`);
        const controller = events.streams.open(false);
        ctx.res.once('close', () => controller.abort());
        const lines = events.stream(params.id, { follow: false, since: 0, limit: undefined }, controller.signal);
        return {
          status: 200,
          headers: {
            'Content-Type': 'text/plain; charset=utf-8',
            'Cache-Control': 'no-store',
            'Content-Disposition': `inline; filename="${params.id.replace(/[^\w.-]/g, '_')}.log"`,
            'X-Content-Type-Options': 'nosniff',
          },
          body: presentLogLines(spectators.eventLines(identity, lines)),
        };
      },
    }),
  ];
}
