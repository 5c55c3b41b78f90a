// Run lifecycle notifications: a held-open NDJSON stream for listeners, and a list for pollers.
import { z } from 'zod';
import { booleanFlag, canonicalInt } from './common.schema.ts';
import { lifecycleEvent, lifecycleLine } from './events.schema.ts';
import { defineRoute } from '../route.ts';
import type { LifecycleHub } from '../services/lifecycle-hub.ts';

export function eventsRoutes(hub: LifecycleHub) {
  return [
    defineRoute({
      method: 'get',
      path: '/events/stream',
      auth: 'readOperator',
      summary:
        'Run lifecycle transitions as they happen: one {runId, hook, state, ts} line each ' +
        '(NDJSON, held open; follow=0 closes at once)',
      tags: ['events'],
      query: z.object({ follow: booleanFlag.optional() }).strict(),
      responses: {
        200: {
          description: 'One JSON object per line, one line per transition; no replay, no blank lines',
          schema: lifecycleLine,
          contentType: 'application/x-ndjson',
        },
        503: { description: 'event_stream_capacity: this server holds its maximum of streams (Retry-After)' },
      },
      handler: async ({ query, ctx }) => {
        const headers = {
          'Content-Type': 'application/x-ndjson',
          'Cache-Control': 'no-store',
          'X-Accel-Buffering': 'no',
        };
        // HEAD has no body to hold open (the response is written by hand below, so Koa would not end it).
        if (query.follow === false || ctx.method === 'HEAD') return { status: 200, headers, body: '' };
        const controller = new AbortController();
        const attach = hub.subscribe(controller.signal);
        // The response closes when its client goes (a pipelined one queued behind another too); a
        // client gone while the request was authorised has closed it already.
        ctx.res.once('close', () => controller.abort());
        if (ctx.res.destroyed || ctx.req.socket.destroyed) controller.abort();
        ctx.req.socket.setKeepAlive(true, hub.keepAliveMs);
        return { status: 200, headers, writeBody: attach };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/events',
      auth: 'readOperator',
      summary: 'Recent run lifecycle transitions, oldest first (since: after this id)',
      tags: ['events'],
      query: z
        .object({
          since: canonicalInt(0, Number.MAX_SAFE_INTEGER).optional(),
          limit: canonicalInt(1, 1000).default(100),
        })
        .strict(),
      responses: { 200: { description: 'The transitions', schema: z.object({ events: z.array(lifecycleEvent) }) } },
      handler: async ({ query }) => {
        return { status: 200, body: { events: await hub.recent(query.since, query.limit) } };
      },
    }),
  ];
}
