// Request and response schemas of the plan-runs routes.
import { z } from 'zod';
import { FIELD_LIMITS } from '../../core/field-limits.ts';
import { booleanFlag } from './common.schema.ts';
import { PLAN_RUN_STATES } from '../../core/run-states.ts';
import { planRunChildSchema, planRunSchema } from '../../core/plan-run-schema.ts';
import { linksSchema, runSchema } from './runs.schema.ts';

const optionalName = z.string().max(FIELD_LIMITS.name).trim().min(1).nullable().optional();

export const createPlanRunBody = z
  .object({
    project: z.string().max(FIELD_LIMITS.idParam).trim().min(1, 'required: a project id (GET /projects)'),
    agent: z.string().max(FIELD_LIMITS.name).trim().min(1, 'required: the name of an agent (GET /agents)'),
    planId: z.string().max(FIELD_LIMITS.name).trim().min(1).optional(),
    issues: z.array(z.string().max(FIELD_LIMITS.name).trim().min(1)).min(1).max(500).optional(),
    promptTemplate: z.string().max(FIELD_LIMITS.promptTemplate).trim().min(1).optional(),
    ref: optionalName,
    providerOverride: optionalName,
    modelOverride: optionalName,
    maxCostUsd: z.number().positive().finite().nullable().optional(),
    dispatcherHandle: optionalName,
  })
  .strict()
  .superRefine((body, ctx) => {
    if ((body.planId === undefined) === (body.issues === undefined))
      ctx.addIssue({ code: 'custom', path: ['planId'], message: 'give exactly one of planId or issues' });
    if (body.issues && new Set(body.issues).size !== body.issues.length)
      ctx.addIssue({ code: 'custom', path: ['issues'], message: 'an issue may appear only once' });
  });
export type CreatePlanRunBody = z.infer<typeof createPlanRunBody>;

export const planRunIdParams = z.object({ id: z.string().min(1).max(FIELD_LIMITS.idParam) }).strict();

export const listPlanRunsQuery = z
  .object({
    project: z.string().min(1).max(FIELD_LIMITS.idParam).optional(),
    state: z.enum([...PLAN_RUN_STATES, 'active']).optional(),
  })
  .strict();
export type ListPlanRunsQuery = z.infer<typeof listPlanRunsQuery>;

export const planRunEventsQuery = z.object({ follow: booleanFlag.optional() }).strict();

export const cancelPlanRunBody = z
  .object({ reason: z.string().max(FIELD_LIMITS.reason).trim().min(1).nullable().optional() })
  .strict();
export const resumePlanRunBody = z
  .object({
    reason: z
      .string()
      .trim()
      .min(1)
      .max(FIELD_LIMITS.reason)
      .optional()
      .describe("The operator's note, kept in the plan_run.resumed event"),
  })
  .strict();

export { planRunChildSchema, planRunSchema };

/** What a spectator (public mode) sees, as in the reference: no template, overrides, cap, handle or reason. */
export const spectatorPlanRunSchema = planRunSchema.omit({
  promptTemplate: true,
  providerOverride: true,
  modelOverride: true,
  maxCostUsd: true,
  dispatcherHandle: true,
  failureReason: true,
});
/** A plan-run as a reader sees it: the operator's view, or the spectator's. */
const planRunView = z.union([planRunSchema, spectatorPlanRunSchema]);

/** Spectators do not get a child's failureReason (docs/security.md, public mode). */
const spectatorPlanRunChildSchema = planRunChildSchema.omit({ failureReason: true });
const planRunChildView = z.union([planRunChildSchema, spectatorPlanRunChildSchema]);

export const createPlanRunResponse = z.object({
  planRun: planRunSchema,
  children: z.array(planRunChildSchema),
  links: linksSchema,
});
export const getPlanRunResponse = z.object({
  planRun: planRunView,
  children: z.array(planRunChildView),
  runs: z.array(runSchema),
  links: linksSchema,
});
export const listPlanRunsResponse = z.object({ planRuns: z.array(planRunView) });
export const cancelPlanRunResponse = z.object({
  planRun: planRunSchema,
  cancelledChild: z
    .object({ childSeq: z.number().int().optional(), runId: z.string().optional() })
    .describe('The child run the cancel stopped; {} when none was'),
  alreadyTerminal: z.boolean(),
});
export const resumePlanRunResponse = z.object({
  planRun: planRunSchema,
  resumedChild: z.object({ seq: z.number().int(), runId: z.string().nullable() }).nullable(),
  reason: z.string().describe('The failure the plan-run resumes from (its failureReason, or cancelled)'),
});
