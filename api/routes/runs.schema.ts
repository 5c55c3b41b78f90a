// Request and response schemas of the runs routes: they validate requests and document the API.
import { z } from 'zod';
import { FIELD_LIMITS, METADATA_MAX_BYTES } from '../../core/field-limits.ts';
import { RUN_EVENTS_PAGE } from '../../core/event-kinds.ts';
import { booleanFlag, canonicalInt } from './common.schema.ts';
import { runSchema } from '../../core/run-schema.ts';

export { runSchema };
import { EVENT_STREAMS, INBOX_PRIORITIES, INBOX_STATES, RUN_STATES, type RunState } from '../../core/run-states.ts';

const optionalName = z.string().max(FIELD_LIMITS.name).trim().min(1).nullable().optional();
const runId = z.string().min(1).max(FIELD_LIMITS.idParam).nullable().optional();

export const dispatchRunBody = z
  .object({
    agent: z.string().max(FIELD_LIMITS.name).trim().min(1, 'required: the name of an agent (GET /agents)').optional(),
    project: z.string().max(FIELD_LIMITS.idParam).trim().min(1).nullable().optional(),
    prompt: z
      .string()
      .refine((value) => value.trim().length > 0, 'required and must not be blank')
      .optional(),
    continueFromRunId: runId,
    parentRunId: runId,
    cloneFromRunId: runId,
    trigger: z.string().max(FIELD_LIMITS.trigger).trim().min(1).optional(),
    providerOverride: optionalName,
    modelOverride: optionalName,
    maxCostUsd: z.number().positive().finite().nullable().optional(),
    onCapHit: z
      .enum(['cancel', 'pause'])
      .nullable()
      .optional()
      .describe('What crossing the cost cap does: cancel the run (default), or pause it until the cap is raised'),
    seedId: optionalName,
    ref: optionalName,
    targetBranch: optionalName,
    dispatcherHandle: optionalName,
    baseCommit: z
      .string()
      .regex(/^[0-9a-f]{40}$/, 'must be a full 40-hex commit SHA')
      .nullable()
      .optional(),
    metadata: z
      .record(z.string().max(FIELD_LIMITS.name), z.unknown())
      .refine(
        (value) => JSON.stringify(value).length <= METADATA_MAX_BYTES,
        `at most ${METADATA_MAX_BYTES} bytes of JSON`,
      )
      .nullable()
      .optional()
      .describe('Labels of your own, stored with the run (a JSON object)'),
  })
  .strict()
  // agent, project and prompt may come from the run being replicated; otherwise they are required.
  .superRefine((body, ctx) => {
    if (body.cloneFromRunId) return;
    if (!body.agent)
      ctx.addIssue({ code: 'custom', path: ['agent'], message: 'required: the name of an agent (GET /agents)' });
    if (body.prompt === undefined)
      ctx.addIssue({ code: 'custom', path: ['prompt'], message: 'required and must not be blank' });
  });
export type DispatchRunBody = z.infer<typeof dispatchRunBody>;

export const runIdParams = z.object({ id: z.string().min(1).max(FIELD_LIMITS.idParam) }).strict();

export const runEventsQuery = z
  .object({
    follow: booleanFlag.optional(),
    since: canonicalInt(0, Number.MAX_SAFE_INTEGER).default(0),
    before: canonicalInt(1, Number.MAX_SAFE_INTEGER)
      .optional()
      .describe(
        'A backward page: the events with a smaller seq (with limit, the last limit of them), in seq order, ' +
          `never followed; ${Number.MAX_SAFE_INTEGER} reads the log's last page`,
      ),
    limit: canonicalInt(1, RUN_EVENTS_PAGE)
      .optional()
      .describe(
        `The events of this answer, at most (it then does not follow); without it, a read that does not ` +
          `follow answers at most ${RUN_EVENTS_PAGE}: read on with since=<last seq>`,
      ),
  })
  .strict();

export const cancelRunBody = z
  .object({ reason: z.string().max(FIELD_LIMITS.reason).trim().min(1).nullable().optional() })
  .strict();
export const resumeRunBody = z
  .object({
    maxCostUsd: z.number().positive().finite().describe("The run's new cost cap: above what it has spent"),
  })
  .strict();

export const cancelRunResponse = z.object({
  state: z.enum(RUN_STATES),
  alreadyTerminal: z.boolean(),
  sandboxRun: z.object({ id: z.string(), state: z.enum(RUN_STATES) }).nullable(),
});

export const eventLineSchema = z.object({
  id: z.number().int(),
  runId: z.string(),
  seq: z.number().int(),
  ts: z.string(),
  kind: z.string(),
  stream: z.enum(EVENT_STREAMS).nullable(),
  payload: z.unknown(),
});

export const steerBody = z
  .object({
    body: z
      .string()
      .max(65_536)
      .refine((value) => value.trim().length > 0, 'required and must not be blank'),
    priority: z.enum(INBOX_PRIORITIES).default('normal'),
    fromActor: z.string().max(FIELD_LIMITS.name).trim().min(1).default('operator'),
  })
  .strict();

export const salvageBody = z
  .object({
    version: z.literal(1),
    trigger: z.enum(['push_failed', 'no_intent', 'empty_push_dirty']),
    rescueRef: z.string().min(1).max(255).nullable(),
    bundleBase64: z
      .string()
      .min(1)
      .regex(/^[A-Za-z0-9+/]+={0,2}$/, 'base64')
      .nullable(),
    branch: z.string().min(1).max(255).nullable(),
    baseBranch: z.string().min(1).max(255).nullable(),
    notes: z.array(z.string().max(4000)).max(50).optional(),
  })
  .strict();

export const inboxQuerySchema = z.object({ peek: booleanFlag.optional() }).strict();

export const inboxMessageSchema = z.object({
  id: z.string(),
  runId: z.string().nullable(),
  body: z.string(),
  priority: z.enum(INBOX_PRIORITIES),
  fromActor: z.string(),
  state: z.enum(INBOX_STATES),
  createdAt: z.string(),
  deliveredAt: z.string().nullable(),
});

const RUN_STATE_LIST = new RegExp(`^(${RUN_STATES.join('|')})(,(${RUN_STATES.join('|')}))*$`);

export const listRunsQuery = z
  .object({
    project: z.string().min(1).optional(),
    agent: z.string().min(1).optional(),
    state: z
      .string()
      .regex(RUN_STATE_LIST, `one or more of ${RUN_STATES.join(', ')}, comma-separated`)
      .transform((value) => [...new Set(value.split(','))] as RunState[])
      .optional()
      .describe('Beyond the spec: only runs in these states (comma-separated), e.g. queued,running'),
    sort: z.enum(['started', 'cost']).default('started'),
    dir: z.enum(['asc', 'desc']).default('desc'),
    limit: canonicalInt(1, 500).default(100),
    offset: canonicalInt(0, Number.MAX_SAFE_INTEGER).default(0),
  })
  .strict()
  .refine((query) => !(query.project && query.agent), {
    message: 'filter by project or by agent, not both',
    path: ['agent'],
  });
export type ListRunsQuery = z.infer<typeof listRunsQuery>;

/**
 * Beyond the spec: the dashboard's page, and where to debug the workflow (the Temporal UI page) when svc knows the UI.
 */
export const linksSchema = z.object({
  temporalUi: z
    .string()
    .nullable()
    .describe('The workflow in the Temporal UI; null when svc knows no UI, and for spectators'),
  dashboard: z.string().describe("The dashboard's page: at SVC_PUBLIC_URL, else at the address this API listens on"),
});
export const dispatchRunResponse = z.object({
  run: runSchema,
  sandbox: z.object({ id: z.string(), workspacePath: z.string() }),
  links: linksSchema,
});
export const getRunResponse = z.object({ run: runSchema, links: linksSchema });
export const listRunsResponse = z.object({
  runs: z.array(runSchema),
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
  costTotalUsd: z.number().nullable(),
  costPricedCount: z.number().int(),
});
/** POST /runs/{id}/steer: the stored message; its state turns `delivered` when the agent claims it. */
export const steerResponse = z.object({ message: inboxMessageSchema });
