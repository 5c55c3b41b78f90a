// The wire shapes of a finalize result as the API validates them (POST /runs/{id}/finalize-result).
// Apart from core/finalize.ts: zod stays out of the workflows' module graph.
import { z } from 'zod';
import { BUNDLE_FILE, FINALIZE_STAGES } from './finalize-stages.ts';

export const finalizeResultSchema = z
  .object({
    pushed: z.boolean(),
    commitsAhead: z.number().int().min(0).nullable(),
    emptyPush: z.boolean(),
    dirty: z.boolean(),
    dirtyPaths: z.array(z.string()).max(1000).optional(),
    workspacePlansBody: z.string().nullable().optional(),
    events: z.array(z.object({ kind: z.string().min(1).max(128), payload: z.unknown() }).strict()).max(100),
    artifacts: z.record(z.string(), z.unknown()).default({}),
    prBranch: z.string().min(1).nullable(),
    stages: z
      .array(
        z
          .object({
            stage: z.enum(FINALIZE_STAGES),
            status: z.enum(['ok', 'skipped', 'failed']),
            error: z.string().max(4000).optional(),
          })
          .strict(),
      )
      .max(20),
    /** The hand-over: the bundle the sandbox left in its outbox, and the commit it says HEAD is. */
    bundle: z
      .object({ file: z.literal(BUNDLE_FILE), tip: z.string().regex(/^[0-9a-f]{40,64}$/) })
      .strict()
      .nullable()
      .optional(),
  })
  .strict();
/** A result as the sandbox posts it. */
export type FinalizeResultWire = z.infer<typeof finalizeResultSchema>;

export const finalizeResultEnvelopeSchema = z
  .object({ version: z.literal(1), attemptId: z.string().min(1).max(128), result: finalizeResultSchema })
  .strict();
