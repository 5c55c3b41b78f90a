// The API's Run JSON, declared once: the API validates and documents it from this schema,
// presentRun is typed by it, the workflow's RunSnapshot and the read model's Run entity are checked
// against it at compile time. Add a field here first; the compiler then names every other place.
import { z } from 'zod';
import { CLONE_KINDS, COST_BASES, PREVIEW_STATES, PR_STATES, RUN_FAILURE_REASONS, RUN_STATES } from './run-states.ts';

const timestamp = z.string().nullable();

/** The Run every route answers with (a spectator's with some fields nulled: api/presenters/spectator.ts). */
export const runSchema = z.object({
  id: z.string(),
  agentName: z.string(),
  projectId: z.string().nullable(),
  sandboxId: z.string().nullable(),
  sandboxRunId: z.string().nullable(),
  seedId: z.string().nullable(),
  parentRunId: z.string().nullable(),
  cloneKind: z.enum(CLONE_KINDS).nullable(),
  mode: z.literal('batch'),
  provider: z.string().nullable(),
  model: z.string().nullable(),
  renderedAgentJson: z.unknown(),
  metadata: z.record(z.string(), z.unknown()).nullable().describe("The dispatcher's labels; null for spectators"),
  state: z.enum(RUN_STATES),
  queueReason: z
    .string()
    .nullable()
    .describe('Why a queued run has not started: the concurrency limit it waits behind (docs/runs.md); else null'),
  pausedReason: z
    .string()
    .nullable()
    .describe(
      'Why a running run is paused: it crossed its cost cap with onCapHit: pause, and waits for POST ' +
        '/runs/{id}/resume or a cancel',
    ),
  failureReason: z.enum(RUN_FAILURE_REASONS).nullable(),
  createdAt: z.number().nullable(),
  startedAt: timestamp,
  endedAt: timestamp,
  commitsAhead: z.number().int().nullable(),
  filesChanged: z.number().int().nullable(),
  insertions: z.number().int().nullable(),
  deletions: z.number().int().nullable(),
  prompt: z.string(),
  trigger: z.string(),
  prUrl: z.string().nullable(),
  prState: z.enum(PR_STATES).nullable(),
  prMergedAt: timestamp,
  targetBranch: z.string().nullable(),
  ref: z.string().nullable(),
  salvageRef: z.string().nullable(),
  salvagePath: z.string().nullable(),
  costUsd: z.number().nullable(),
  tokensInput: z.number().int().nullable(),
  tokensOutput: z.number().int().nullable(),
  tokensCacheRead: z.number().int().nullable(),
  tokensCacheWrite: z.number().int().nullable(),
  previewState: z.enum(PREVIEW_STATES).nullable(),
  previewPort: z.number().int().nullable(),
  previewStartedAt: timestamp,
  previewLastHitAt: timestamp,
  previewFailureMessage: z.string().nullable(),
  costBasis: z.enum(COST_BASES),
  prRounds: z
    .number()
    .int()
    .nullable()
    .describe("Follow-up rounds svc ran on the run's PR (CI fixes, reviews); null: none"),
  prCostUsd: z.number().nullable().describe("The PR's total cost: the run's and its rounds'; null until a round ran"),
});

/** A Run as the API presents it. */
export type RunJson = z.infer<typeof runSchema>;
