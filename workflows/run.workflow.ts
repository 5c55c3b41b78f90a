// runWorkflow: one run, from queued to a terminal state. Workflow id = run id. The workflow holds
// the run; every transition is projected into the read model by an activity before it goes on.
import {
  ActivityFailure,
  allHandlersFinished,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  patched,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { PATCHES } from './patches.ts';
import type { RunEventInput } from '../activities/index.ts';
import { classifyAgentExit } from '../core/agent-exit.ts';
import { claimAll, foldIntoPrompt, unreadInClaimOrder, type InboxItem } from '../core/inbox.ts';
import {
  DEFAULT_RUN_TIMING,
  initialRunSnapshot,
  type RunOutcome,
  type RunSnapshot,
  type RunWorkflowInput,
} from '../core/run-model.ts';
import {
  FAILURE_BY_PHASE,
  isTerminalRunState,
  type RunFailureReason,
  type RunPhase,
  type RunState,
} from '../core/run-states.ts';
import { SvcState } from '../core/search-attributes.ts';
import { readModel, sandboxSetup, supervision } from './activity-proxies.ts';
import { describeFailure } from './failures.ts';
import {
  cancelSignal,
  childRunProgressSignal,
  claimInboxUpdate,
  finalizeResultSignal,
  finalizeStateQuery,
  inboxQuery,
  runAcceptedUpdate,
  runSnapshotQuery,
  salvageSignal,
  steerSignal,
  type CancelRequest,
} from './messages.ts';
import { finalizeWork, watchPullRequest, type FinalizeChannel } from './run-tail.ts';

/**
 * One run, from dispatch to its terminal state (workflow id = run id): cut the workspace, start the
 * agent in its sandbox, supervise it (steering, cancel, watchdogs), finalize its work (push, PR,
 * change summary), then follow the PR. The run's state lives here; every projection to the read
 * model and every I/O is an activity. Whatever fails inside, the run still ends in a terminal
 * state (docs/runs.md, docs/reliability.md).
 */
export async function runWorkflow(input: RunWorkflowInput): Promise<RunOutcome> {
  const run: RunSnapshot = initialRunSnapshot(input);
  let accepted = false;
  let cancelRequest: CancelRequest | null = null;
  setHandler(runSnapshotQuery, () => run);
  setHandler(runAcceptedUpdate, async () => {
    await condition(() => accepted);
    return run;
  });
  setHandler(cancelSignal, (request) => {
    cancelRequest ??= request;
  });

  let toldPlan = '';
  const project = async (
    events: RunEventInput[],
    extra: { triggerFire?: RunWorkflowInput['triggerFire']; inbox?: InboxItem[] } = {},
  ) => {
    run.projectionVersion += 1;
    await readModel.projectRun({
      snapshot: { ...run },
      events,
      triggerFire: extra.triggerFire ?? null,
      inbox: extra.inbox ?? [],
    });
    if (input.planRun && `${run.state}/${run.prState}` !== toldPlan) {
      toldPlan = `${run.state}/${run.prState}`;
      const { planRunId, seq } = input.planRun;
      // A plan-run that has ended (failed, cancelled) no longer listens; a resumed one asks afresh.
      await getExternalWorkflowHandle(planRunId)
        .signal(childRunProgressSignal, {
          planRunId,
          seq,
          runId: run.id,
          state: run.state,
          failureReason: run.failureReason,
          prUrl: run.prUrl,
          prState: run.prState,
          prMergedAt: run.prMergedAt,
          endedAt: run.endedAt,
          emptyPush: run.commitsAhead === 0,
        })
        .catch(() => undefined);
    }
  };
  const now = () => new Date(Date.now()).toISOString();

  // The steering inbox lives here: the API validates a message and signals it; claims are updates,
  // so each message is delivered at most once whatever the number of pollers.
  const inbox: InboxItem[] = [];
  setHandler(steerSignal, async (message) => {
    if (isTerminalRunState(run.state) || inbox.some((item) => item.id === message.id)) return;
    const item: InboxItem = {
      ...message,
      seq: inbox.length + 1,
      state: 'unread',
      deliveredAt: null,
      deliveredRunId: null,
    };
    inbox.push(item);
    await project(
      [
        {
          dedupeKey: `steer:sent:${item.id}`,
          kind: 'steer.sent',
          stream: 'system',
          ts: item.createdAt,
          payload: { messageId: item.id, priority: item.priority, fromActor: item.fromActor },
        },
      ],
      { inbox: [{ ...item }] },
    );
  });
  setHandler(inboxQuery, () => unreadInClaimOrder(inbox));
  const claim = async () => {
    const at = now();
    const claimed = claimAll(inbox, run.id, at);
    if (claimed.length) {
      await project(
        claimed.map((item) => ({
          dedupeKey: `steer:delivered:${item.id}`,
          kind: 'steer.delivered',
          stream: 'system' as const,
          ts: at,
          payload: { messageId: item.id },
        })),
        { inbox: claimed },
      );
    }
    return claimed;
  };
  setHandler(claimInboxUpdate, claim);

  // Finalize: the sandbox fetches the parked intent and posts its result for that attempt only.
  const finalize: FinalizeChannel = { intent: null, result: null };
  setHandler(finalizeStateQuery, () => ({ intent: finalize.intent, received: finalize.result !== null }));
  setHandler(finalizeResultSignal, ({ attemptId, result }) => {
    if (finalize.intent?.attemptId === attemptId && finalize.result === null) finalize.result = result;
  });
  const timing = input.timing ?? DEFAULT_RUN_TIMING;
  setHandler(salvageSignal, async (salvage) => {
    run.salvageRef = salvage.salvageRef ?? run.salvageRef;
    run.salvagePath = salvage.salvagePath ?? run.salvagePath;
    await project([
      {
        dedupeKey: `salvage:pod:${salvage.trigger}`,
        kind: 'reap.workspace_salvage_recorded',
        stream: 'system',
        ts: now(),
        payload: { source: 'pod', ...salvage },
      },
    ]);
  });
  const finish = async (
    state: RunState,
    failureReason: RunFailureReason | null,
    endedAt: string,
    detail: Record<string, unknown>,
  ) => {
    run.state = state;
    run.failureReason = failureReason;
    run.endedAt = endedAt;
    run.startedAt ??= endedAt;
    upsertSearchAttributes([{ key: SvcState, value: state }]);
    // Messages nobody claimed will never be delivered now.
    const undelivered = unreadInClaimOrder(inbox);
    for (const item of undelivered) item.state = 'failed';
    const events: RunEventInput[] = [];
    if (cancelRequest)
      events.push({
        dedupeKey: 'cancel:requested',
        kind: 'cancel.requested',
        stream: 'system',
        ts: endedAt,
        payload: cancelRequest,
      });
    events.push({
      dedupeKey: 'state:terminal',
      kind: 'state_change',
      stream: 'system',
      ts: endedAt,
      payload: { type: 'result', state, failureReason, ...detail },
    });
    await project(events, { inbox: undelivered.map((item) => ({ ...item })) });
    await condition(allHandlersFinished);
    // A terminal run still follows its pull request until it is merged or closed.
    await watchPullRequest(run, timing, (more) => project(more));
    return { runId: run.id, state, failureReason, prUrl: run.prUrl, prState: run.prState };
  };
  const cancelled = () => finish('cancelled', null, now(), { reason: cancelRequest?.reason ?? null });

  // The run from queued to its end, phase by phase; `phase` names where a failure happened.
  let phase: RunPhase = 'accepting';
  const lifecycle = async (): Promise<RunOutcome> => {
    await project(
      [
        {
          dedupeKey: 'state:queued',
          kind: 'state_change',
          stream: 'system',
          ts: new Date(input.createdAt).toISOString(),
          payload: { state: 'queued' },
        },
      ],
      { triggerFire: input.triggerFire },
    );
    accepted = true;
    if (cancelRequest) return cancelled();

    let workspace;
    try {
      phase = 'workspace';
      workspace = await sandboxSetup.prepareWorkspace({
        runId: run.id,
        projectId: run.projectId,
        workspacePath: input.sandbox.workspacePath,
        branch: input.branch ?? null,
        baseBranch: input.baseBranch ?? null,
        baseCommit: input.baseCommit,
        continueFromBranch: input.parent?.cloneKind === 'continue' ? input.parent.branch : null,
      });
    } catch (error) {
      if (!(error instanceof ActivityFailure)) throw error;
      return finish('failed', 'never_started', now(), { message: error.cause?.message ?? error.message });
    }
    run.workspacePath = workspace.workspacePath;
    if (cancelRequest) return cancelled();

    // Messages that arrived while queued reach the agent with its prompt.
    const prompt = foldIntoPrompt(input.prompt, await claim());
    phase = 'starting';
    const start = await sandboxSetup.startAgent({
      runId: run.id,
      agent: input.agent,
      prompt,
      workspacePath: workspace.workspacePath,
      memoryLimitMiB: input.sandbox.memoryLimitMiB ?? null,
      network: input.sandbox.network ?? null,
    });
    run.sandboxRunId = start.sandboxRunId;
    run.costBasis = start.costBasis;
    if (start.status === 'spawn_failed') {
      return finish('failed', 'spawn_failed', start.endedAt ?? now(), { message: start.message });
    }
    if (start.status === 'sandbox_failed') {
      return finish('failed', 'sandbox_failed', start.endedAt ?? now(), { message: start.message });
    }
    if (start.status === 'lost') {
      return finish('failed', 'sandbox_run_lost', now(), { message: start.message });
    }

    run.state = 'running';
    run.startedAt = start.spawnedAt ?? now();
    upsertSearchAttributes([{ key: SvcState, value: 'running' }]);
    await project([
      {
        dedupeKey: 'sandbox:started',
        kind: 'sandbox.started',
        stream: 'system',
        ts: run.startedAt,
        payload: {
          ...(start.sandbox ?? {}),
          sandboxId: run.sandboxId,
          sandboxRunId: run.sandboxRunId,
          workspacePath: run.workspacePath,
          isolation: start.isolation,
          memory: start.memory ?? null,
          workspace: workspace.kind,
        },
      },
      {
        dedupeKey: 'state:running',
        kind: 'state_change',
        stream: 'system',
        ts: run.startedAt,
        payload: { state: 'running' },
      },
    ]);

    // A cancel stops the agent through its own activity; the supervising activity then sees the
    // agent exit like any other, so every output line is still recorded. (Cancelling the
    // supervising activity instead would not wait: Temporal records a retrying activity as started
    // only when it ends, so the SDK would resolve its cancellation at once.)
    let supervising = true;
    let timedOut: 'duration' | 'silence' | null = null;
    const maxDurationMs = input.agent.maxDurationMinutes ? Math.round(input.agent.maxDurationMinutes * 60_000) : null;
    // The duration watchdog is a workflow timer: it survives any restart and costs nothing while it waits.
    const watchdog = maxDurationMs
      ? condition(() => !supervising, maxDurationMs).then((ended) => void (timedOut ??= ended ? null : 'duration'))
      : Promise.resolve();
    // The silence watchdog: a timer that looks, now and then, at when the agent last said anything.
    const silenceWatch = (async () => {
      // patched(): runs started before the watchdog existed replay without its timers.
      if (!timing.silenceTimeoutMs || !patched(PATCHES.silenceWatchdog)) return;
      while (supervising && timedOut === null && !cancelRequest) {
        if (
          await condition(
            () => !supervising,
            Math.max(1000, Math.round(Math.min(timing.silenceTimeoutMs / 3, 300_000))),
          )
        )
          return;
        const { lastOutputAt } = await sandboxSetup.agentActivity({ runId: run.id });
        if (supervising && Date.now() - lastOutputAt > timing.silenceTimeoutMs) timedOut ??= 'silence';
      }
    })();
    const stopping = condition(() => cancelRequest !== null || timedOut !== null || !supervising).then(() =>
      supervising ? sandboxSetup.stopAgent({ runId: run.id }) : undefined,
    );
    phase = 'supervising';
    const evidence = await supervision.superviseAgent({
      runId: run.id,
      runtime: input.agent.runtime,
      maxCostUsd: input.agent.maxCostUsd,
    });
    if (evidence.usage) Object.assign(run, evidence.usage);
    supervising = false;
    await Promise.all([stopping, watchdog, silenceWatch]);
    if (cancelRequest) return cancelled();
    // Crossing the spend cap cancels the run (the reference's rule), keeping what the agent reported.
    if (evidence.costCap)
      return finish('cancelled', null, evidence.endedAt ?? now(), { reason: 'cost_cap_exceeded', ...evidence.costCap });
    if (timedOut) {
      await project([
        timedOut === 'duration'
          ? {
              dedupeKey: 'watchdog:duration',
              kind: 'duration.exceeded',
              stream: 'system',
              ts: now(),
              payload: { maxDurationMinutes: input.agent.maxDurationMinutes },
            }
          : {
              dedupeKey: 'watchdog:silence',
              kind: 'watchdog.silence_exceeded',
              stream: 'system',
              ts: now(),
              payload: { silenceTimeoutMs: timing.silenceTimeoutMs },
            },
      ]);
      return finish('failed', 'timed_out', evidence.endedAt ?? now(), {
        exitCode: evidence.exitCode,
        signal: evidence.signal,
      });
    }
    const verdict = classifyAgentExit(evidence);
    const exit = { exitCode: evidence.exitCode, signal: evidence.signal };
    if (verdict.state !== 'succeeded' || !run.projectId || !run.branch || !input.baseBranch) {
      return finish(verdict.state, verdict.failureReason, evidence.endedAt ?? now(), exit);
    }
    phase = 'finalizing';
    const finalized = await finalizeWork(run, {
      baseBranch: input.baseBranch,
      timing,
      channel: finalize,
      project: (events) => project(events),
    });
    return finish(finalized.state, finalized.failureReason, now(), {
      ...exit,
      noChanges: finalized.noChanges,
      prUrl: run.prUrl,
    });
  };

  // Whatever fails for good (an activity out of retries, a bug), the run still ends: failed, with
  // the reason closest to where it broke, and an event that says what broke. Its token dies with it.
  try {
    return await lifecycle();
  } catch (error) {
    if (isCancellation(error) || isTerminalRunState(run.state)) throw error;
    const failure = describeFailure(error);
    await project([
      {
        dedupeKey: 'run:internal_failure',
        kind: 'run.internal_failure',
        stream: 'system',
        ts: now(),
        payload: { phase, ...failure },
      },
    ]);
    return finish('failed', FAILURE_BY_PHASE[phase], now(), { internalFailure: { phase, ...failure } });
  }
}
