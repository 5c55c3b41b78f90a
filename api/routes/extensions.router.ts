// Extensions svc fronts for operators: the judge's verdict export.
import { z } from 'zod';
import { canonicalInt } from './common.schema.ts';
import { defineRoute } from '../route.ts';
import type { JudgeProxy } from '../services/judge-proxy.ts';

export const verdictsQuery = z
  .object({
    since: canonicalInt(0).optional(),
    limit: canonicalInt(1).optional(),
    order: z.enum(['asc', 'desc']).optional(),
  })
  .strict();

const verdictLine = z.object({
  id: z.number().int(),
  kind: z.enum(['verdict', 'unjudged']),
  runId: z.string(),
  rubricVersion: z.string().nullable().optional(),
  judgeModelId: z.string().nullable().optional(),
  verdict: z.unknown(),
  reason: z.string().nullable().optional(),
});

export function extensionsRoutes(judge: JudgeProxy) {
  return [
    defineRoute({
      method: 'get',
      path: '/extensions/judge/verdicts.jsonl',
      auth: 'readOperator',
      summary: "The judge's verdicts as NDJSON, proxied (X-Verdicts-Max-Id passed back)",
      tags: ['extensions'],
      query: verdictsQuery,
      responses: {
        200: { description: 'One verdict row per line', schema: verdictLine, contentType: 'application/x-ndjson' },
      },
      handler: async ({ query, ctx }) => {
        const controller = new AbortController();
        ctx.res.once('close', () => controller.abort());
        const page = await judge.verdicts(query, controller.signal);
        return { status: 200, headers: page.headers, body: page.body };
      },
    }),
  ];
}
