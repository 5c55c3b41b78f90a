import { defineRoute } from '../route.ts';
import { presentDispatch, presentRun } from '../presenters/run.presenter.ts';
import { idempotencyKeyOf } from '../idempotency-key.ts';
import { z } from 'zod';
import { isTerminalRunState } from '../../core/run-states.ts';
import { RUN_EVENTS_PAGE, RUN_EVENTS_PAGE_BYTES } from '../../core/event-kinds.ts';
import { finalizeResultEnvelopeSchema } from '../../core/finalize-schema.ts';
import { SPECTATOR_PAGE, type RunEventsService } from '../services/run-events.service.ts';
import type { RunsService } from '../services/runs.service.ts';
import type { RunLinks } from '../presenters/links.ts';
import type { RunDiffs } from '../services/run-diffs.ts';
import { runDiffSchema } from '../../core/run-diff.ts';
import type { SandboxCallbacksService } from '../services/sandbox-callbacks.service.ts';
import { Spectators } from '../presenters/spectator.ts';
import { salvageBodyReader } from '../services/salvage-intake.ts';
import {
  cancelRunBody,
  cancelRunResponse,
  resumeRunBody,
  runSchema,
  dispatchRunBody,
  dispatchRunResponse,
  eventLineSchema,
  inboxMessageSchema,
  steerResponse,
  inboxQuerySchema,
  steerBody,
  salvageBody,
  getRunResponse,
  listRunsQuery,
  listRunsResponse,
  runEventsQuery,
  runIdParams,
} from './runs.schema.ts';

export function runsRoutes(
  runs: RunsService,
  callbacks: SandboxCallbacksService,
  events: RunEventsService,
  links: RunLinks,
  spectators: Spectators,
  diffs: RunDiffs,
) {
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
      handler: async ({ body, ctx }) => {
        const { run, sandbox } = await runs.dispatch(body, idempotencyKeyOf(ctx));
        return { status: 201, body: presentDispatch(run, sandbox, links('run', run.id)) };
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
      handler: async ({ query, identity }) => {
        if (!Spectators.is(identity)) {
          const page = await runs.list(query);
          return { status: 200, body: { ...page, runs: page.runs.map(presentRun) } };
        }
        const page = await runs.list(query, await spectators.visibleProjects());
        return {
          status: 200,
          body: { ...page, costTotalUsd: null, runs: await spectators.runs(page.runs.map(presentRun)) },
        };
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
      handler: async ({ params, identity }) => {
        const run = await runs.get(params.id);
        await spectators.assertVisible(identity, run.projectId, `run "${params.id}"`);
        return {
          status: 200,
          body: Spectators.is(identity)
            ? { run: await spectators.run(presentRun(run)), links: links('run', params.id, true) }
            : { run: presentRun(run), links: links('run', params.id) },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/runs/{id}/diff',
      auth: 'readPublic',
      summary: "The run's change: its files and patches against its base, bounded (docs/api.md)",
      tags: ['runs'],
      params: runIdParams,
      responses: { 200: { description: "The run's change", schema: runDiffSchema } },
      handler: async ({ params, identity }) => {
        const run = await runs.get(params.id);
        await spectators.assertVisible(identity, run.projectId, `run "${params.id}"`);
        const diff = await diffs.of(run);
        return { status: 200, body: Spectators.is(identity) ? spectators.diff(diff) : diff };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/runs/{id}/cancel',
      auth: 'dispatch',
      summary: 'Cancel a run: a queued run never starts, a running agent is stopped',
      tags: ['runs'],
      params: runIdParams,
      body: cancelRunBody,
      responses: { 200: { description: 'The state after the cancel', schema: cancelRunResponse } },
      handler: async ({ params, body }) => ({ status: 200, body: await runs.cancel(params.id, body.reason ?? null) }),
    }),
    defineRoute({
      method: 'post',
      path: '/runs/{id}/resume',
      auth: 'dispatch',
      summary: 'Raise the cost cap of a run paused at it (onCapHit: pause): its agent goes on from its workspace',
      tags: ['runs'],
      params: runIdParams,
      body: resumeRunBody,
      bodyRequired: true,
      responses: {
        202: {
          description: 'Accepted: the run resumes as soon as its workflow takes the raise (a run.resumed event)',
          schema: z.object({ run: runSchema }),
        },
      },
      handler: async ({ params, body }) => ({
        status: 202,
        body: { run: presentRun(await runs.resume(params.id, body.maxCostUsd)) },
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/runs/{id}/steer',
      auth: 'dispatch',
      summary: "Put a steering message in the run's inbox",
      tags: ['runs'],
      params: runIdParams,
      body: steerBody,
      bodyRequired: true,
      responses: { 200: { description: 'The stored message', schema: steerResponse } },
      handler: async ({ params, body }) => ({ status: 200, body: { message: await runs.steer(params.id, body) } }),
    }),
    defineRoute({
      method: 'get',
      path: '/runs/{id}/inbox',
      auth: 'readOperator',
      runToken: true,
      changesState: true,
      summary: 'Claim the unread steering messages (each delivered once); ?peek=1 lists them without claiming',
      tags: ['runs'],
      params: runIdParams,
      query: inboxQuerySchema,
      responses: {
        200: {
          description: 'Messages, highest priority first, then oldest',
          schema: z.object({ messages: z.array(inboxMessageSchema) }),
        },
      },
      handler: async ({ params, query }) => ({
        status: 200,
        body: { messages: await callbacks.inbox(params.id, query.peek ?? false) },
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/runs/{id}/finalize-intent',
      auth: 'readOperator',
      runToken: true,
      summary: 'The finalize intent parked for the sandbox (null until the agent has exited)',
      tags: ['runs'],
      params: runIdParams,
      responses: {
        200: {
          description: 'The intent, or null: keep polling',
          schema: z.object({ intent: z.record(z.string(), z.unknown()).nullable() }),
        },
      },
      handler: async ({ params }) => ({ status: 200, body: await callbacks.finalizeIntent(params.id) }),
    }),
    defineRoute({
      method: 'post',
      path: '/runs/{id}/finalize-result',
      auth: 'dispatch',
      runToken: true,
      summary: "The sandbox's finalize result for the parked attempt (idempotent)",
      tags: ['runs'],
      params: runIdParams,
      body: finalizeResultEnvelopeSchema,
      bodyRequired: true,
      responses: {
        200: {
          description: 'How the result was taken',
          schema: z.object({ outcome: z.enum(['accepted', 'duplicate', 'stale', 'unknown']) }),
        },
      },
      handler: async ({ params, body }) => ({
        status: 200,
        body: await callbacks.finalizeResult(params.id, body.attemptId, body.result),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/runs/{id}/salvage',
      auth: 'dispatch',
      runToken: true,
      summary: 'Keep work the sandbox could not push: a rescue ref and/or a git bundle (idempotent)',
      tags: ['runs'],
      params: runIdParams,
      body: salvageBody,
      bodyRequired: true,
      bodyLimit: 96 << 20,
      // The bundle is decoded to disk as it arrives, never held in memory.
      readBody: salvageBodyReader(() => callbacks.salvageSpoolDir),
      responses: {
        200: {
          description: 'What was kept',
          schema: z.object({ stored: z.boolean(), rescueRef: z.string().nullable() }),
        },
      },
      handler: async ({ params, body, ctx }) => ({
        status: 200,
        body: await callbacks.salvage(params.id, body, (ctx.state.salvageBundle as string | null | undefined) ?? null),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/runs/{id}/git-credential',
      auth: 'dispatch',
      runToken: true,
      summary:
        "A git credential for the run's repository: " +
        'with a GitHub App, a read-only installation token for it; else null',
      tags: ['runs'],
      params: runIdParams,
      responses: { 200: { description: 'The credential', schema: z.object({ gitToken: z.string().nullable() }) } },
      handler: async ({ params }) => ({ status: 200, body: await callbacks.gitCredential(params.id) }),
    }),
    defineRoute({
      method: 'get',
      path: '/runs/{id}/events',
      auth: 'readPublic',
      summary: "The run's events as NDJSON: history, then live lines while the run is not terminal",
      tags: ['runs'],
      params: runIdParams,
      query: runEventsQuery,
      responses: {
        200: {
          description:
            `One event per line. A read that does not follow is at most ${RUN_EVENTS_PAGE} of them ` +
            `(${SPECTATOR_PAGE} for a spectator) and, read forward, about ${RUN_EVENTS_PAGE_BYTES / 1048576} MiB: ` +
            'read on with since=<last seq> until a page comes back empty; GET /runs/{id}/log streams the whole log',
          schema: eventLineSchema,
          contentType: 'application/x-ndjson',
        },
      },
      handler: async ({ params, query, ctx, identity }) => {
        const run = await runs.get(params.id);
        await spectators.assertVisible(identity, run.projectId, `run "${params.id}"`);
        const spectator = Spectators.is(identity);
        // A limit closes the stream after N lines, so it turns following off; spectators hold no streams.
        // A backward page (before) is history only, like a limited read.
        const follow =
          !spectator &&
          query.limit === undefined &&
          query.before === undefined &&
          (query.follow ?? !isTerminalRunState(run.state));
        const controller = events.streams.open(follow);
        ctx.res.once('close', () => controller.abort());
        const { since, before } = query;
        // A read that does not follow is a page, however large the log (the next: since=<last seq>);
        // a spectator's is smaller.
        const limit = spectator
          ? Math.min(query.limit ?? SPECTATOR_PAGE, SPECTATOR_PAGE)
          : (query.limit ?? (follow ? undefined : RUN_EVENTS_PAGE));
        // A backward page is bounded by its limit alone: cut short, it would leave a gap before `before`.
        const maxBytes = follow || before !== undefined ? undefined : RUN_EVENTS_PAGE_BYTES;
        const lines = events.stream(params.id, { follow, since, limit, before, maxBytes }, controller.signal);
        return {
          status: 200,
          headers: { 'Content-Type': 'application/x-ndjson', 'Cache-Control': 'no-store' },
          body: spectators.eventLines(identity, lines),
        };
      },
    }),
  ];
}
