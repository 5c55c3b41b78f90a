// The state of one runWorkflow execution and its message handlers, in one small class (the shape
// of samples-typescript's safe-message-handlers): the run snapshot, the cancel request, the
// steering inbox, the finalize channel, and the two ways the run tells the world about itself:
// publish() (the read-model projection, and the parent plan-run) and finish() (its terminal state).
import {
  allHandlersFinished,
  CancellationScope,
  condition,
  getExternalWorkflowHandle,
  ParentClosePolicy,
  setHandler,
  startChild,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { RunEventInput } from '../activities/index.ts';
import { claimAll, unreadInClaimOrder, type InboxItem, type NewInboxItem } from '../core/inbox.ts';
import {
  DEFAULT_RUN_TIMING,
  initialRunSnapshot,
  type RunOutcome,
  type RunSnapshot,
  type RunTiming,
  type RunWorkflowInput,
} from '../core/run-model.ts';
import { isTerminalRunState, type RunFailureReason, type RunPhase, type RunState } from '../core/run-states.ts';
import { pullRequestWorkflowId } from '../core/run-workflows.ts';
import { SvcKind, SvcProjectId, SvcState } from '../core/search-attributes.ts';
import {
  admissionDecisionSignal,
  admissionReleaseSignal,
  cancelSignal,
  claimInboxUpdate,
  finalizeResultSignal,
  finalizeStateQuery,
  inboxQuery,
  raiseCostCapSignal,
  runSnapshotQuery,
  salvageSignal,
  startGateQuery,
  steerSignal,
  type CancelRequest,
} from './messages.ts';
import type { FinalizeChannel } from './run-tail.ts';
import type { pullRequestWorkflow } from './pull-request.workflow.ts';
import { RunPublisher } from './run-publisher.ts';
import { admissionWorkflowId } from '../core/admission-queue.ts';
import { capRaiseProblem, type UsageTotals } from '../core/cost-pause.ts';

/** Workflow time as an ISO-8601 string (deterministic: the SDK's Date). */
export const now = () => new Date(Date.now()).toISOString();

export class RunExecution {
  readonly input: RunWorkflowInput;
  readonly run: RunSnapshot;
  readonly timing: RunTiming;
  /** The first cancel wins; a later one changes nothing. */
  cancelRequest: CancelRequest | null = null;
  /** A cancel that came after the run ended: it stops the PR loop (workflows/pull-request.workflow.ts). */
  prLoopStop: CancelRequest | null = null;
  /** The workflow's cancellation was asked in Temporal (the UI, a client's cancel): it ends Canceled as it is. */
  cancelledInTemporal = false;
  /** Where the run is: a failure that escapes a phase ends the run with that phase's reason. */
  phase: RunPhase = 'accepting';
  /** The sandbox fetches the parked intent and posts its result for that attempt only. */
  readonly finalize: FinalizeChannel = { intent: null, result: null };
  /** The steering inbox: the API validates a message and signals it; claims are updates. */
  readonly #inbox: InboxItem[] = [];
  /** The admission queue's answer, for a run under a concurrency limit (workflows/run.workflow.ts admit). */
  readonly admission = { asked: false, granted: false, reason: null as string | null };
  /**
   * Pause at the cost cap (workflows/run-pause.ts): the agent's generation (1 until a resume), the
   * usage of the generations before it, and the cap an operator raised it to.
   */
  readonly pause = { generation: 1, usageBefore: null as UsageTotals | null, raisedTo: null as number | null };
  readonly #publisher: RunPublisher;
  /** The workflow following the run's PR, once started (a stop is passed on to it). */
  #pullRequestFollowed = false;

  constructor(input: RunWorkflowInput) {
    this.input = input;
    this.run = initialRunSnapshot(input);
    this.timing = input.timing ?? DEFAULT_RUN_TIMING;
    this.#publisher = new RunPublisher(this.run, input.planRun);
    // A cancellation asked in Temporal is the run's cancel, with svc's events; the phases run in a
    // scope it does not cut short (workflows/run.workflow.ts), so the agent is stopped as for any cancel.
    CancellationScope.current().cancelRequested.catch(() => {
      this.cancelledInTemporal = true;
      return this.requestCancel({ reason: 'workflow cancellation requested in Temporal', requestedBy: 'temporal' });
    });
    setHandler(runSnapshotQuery, () => this.run);
    setHandler(cancelSignal, (request) => this.requestCancel(request));
    setHandler(steerSignal, (message) => this.#receiveSteer(message));
    setHandler(raiseCostCapSignal, ({ maxCostUsd }) => {
      if (!capRaiseProblem(this.run.pausedReason !== null, this.run.costUsd, maxCostUsd))
        this.pause.raisedTo = maxCostUsd;
    });
    setHandler(admissionDecisionSignal, (decision) => {
      if (decision.granted) this.admission.granted = true;
      else if (!this.admission.granted) this.admission.reason = decision.reason;
    });
    setHandler(inboxQuery, () => unreadInClaimOrder(this.#inbox));
    setHandler(claimInboxUpdate, () => this.claimInbox());
    setHandler(startGateQuery, () => ({
      cancelRequested: this.cancelRequest !== null,
      unread: unreadInClaimOrder(this.#inbox).length,
    }));
    setHandler(finalizeStateQuery, () => ({
      intent: this.finalize.intent,
      received: this.finalize.result !== null,
    }));
    setHandler(finalizeResultSignal, ({ attemptId, result }) => {
      if (this.finalize.intent?.attemptId === attemptId && this.finalize.result === null) this.finalize.result = result;
    });
    setHandler(salvageSignal, async (salvage) => {
      this.run.salvageRef = salvage.salvageRef ?? this.run.salvageRef;
      this.run.salvagePath = salvage.salvagePath ?? this.run.salvagePath;
      await this.publish([
        {
          dedupeKey: `salvage:pod:${salvage.trigger}`,
          kind: 'reap.workspace_salvage_recorded',
          stream: 'system',
          ts: now(),
          payload: { source: 'pod', ...salvage },
        },
      ]);
    });
  }

  /** Writes the run (and these events) to the read model, then tells the parent plan-run (run-publisher.ts). */
  publish(
    events: RunEventInput[],
    extra: { triggerFire?: RunWorkflowInput['triggerFire']; inbox?: InboxItem[] } = {},
  ): Promise<void> {
    return this.#publisher.publish(events, extra);
  }

  /**
   * The first cancel wins. A run that has ended may still have its PR followed: a cancel then stops
   * the PR loop (docs/pr-loop.md), in the PR's workflow once that has started.
   */
  async requestCancel(request: CancelRequest): Promise<void> {
    if (isTerminalRunState(this.run.state)) this.prLoopStop ??= request;
    this.cancelRequest ??= request;
    if (this.#pullRequestFollowed) await this.#stopPullRequestLoop(request);
  }

  /** Delivers every unread message, most important first; each message at most once. */
  async claimInbox(): Promise<InboxItem[]> {
    const at = now();
    const claimed = claimAll(this.#inbox, this.run.id, at);
    if (claimed.length) {
      await this.publish(
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
  }

  /**
   * The run's terminal state: projected with its terminal envelope (undelivered messages marked
   * failed), then, once every handler is done, an open PR is handed over to a workflow of its own.
   */
  async finish(
    state: RunState,
    failureReason: RunFailureReason | null,
    endedAt: string,
    detail: Record<string, unknown>,
  ): Promise<RunOutcome> {
    const { run } = this;
    run.state = state;
    run.failureReason = failureReason;
    run.endedAt = endedAt;
    run.startedAt ??= endedAt;
    upsertSearchAttributes([{ key: SvcState, value: state }]);
    // Messages nobody claimed will never be delivered now.
    const undelivered = unreadInClaimOrder(this.#inbox);
    for (const item of undelivered) item.state = 'failed';
    const events: RunEventInput[] = [];
    if (this.cancelRequest)
      events.push({
        dedupeKey: 'cancel:requested',
        kind: 'cancel.requested',
        stream: 'system',
        ts: endedAt,
        payload: this.cancelRequest,
      });
    events.push({
      dedupeKey: 'state:terminal',
      kind: 'state_change',
      stream: 'system',
      ts: endedAt,
      payload: { type: 'result', state, failureReason, ...detail },
    });
    run.queueReason = null;
    run.pausedReason = null;
    await this.publish(events, { inbox: undelivered.map((item) => ({ ...item })) });
    // The run's slot (or its place in the queue) is free for the next run.
    if (this.admission.asked)
      await CancellationScope.nonCancellable(() =>
        getExternalWorkflowHandle(admissionWorkflowId(workflowInfo().taskQueue))
          .signal(admissionReleaseSignal, { runId: run.id })
          .catch(() => undefined),
      );
    await condition(allHandlersFinished);
    // A cancel that lost the race with a successful end still means "stop": the PR is only followed.
    this.prLoopStop ??= this.cancelRequest;
    // An open PR is followed by a workflow of its own; a PR loop's round leaves it to its run.
    if (run.prUrl && run.prState === 'open' && !this.input.followUp) await this.#handOverPullRequest();
    await condition(allHandlersFinished);
    return { runId: run.id, state, failureReason, prUrl: run.prUrl, prState: run.prState, costUsd: run.costUsd };
  }

  /**
   * Starts the workflow that follows the run's open PR (workflows/pull-request.workflow.ts), an
   * abandoned child, so it outlives this workflow's close; its start is recorded here, exactly once.
   * The run's row says where it went, then that workflow writes it on from this version.
   */
  async #handOverPullRequest(): Promise<void> {
    const { run, input } = this;
    const workflowId = pullRequestWorkflowId(run.id);
    upsertMemo({ pullRequestWorkflowId: workflowId });
    await this.publish([
      { dedupeKey: 'pr:followed', kind: 'pr.follow_started', stream: 'system', ts: now(), payload: { workflowId } },
    ]);
    const stop = this.prLoopStop;
    await CancellationScope.nonCancellable(() =>
      startChild<typeof pullRequestWorkflow>('pullRequestWorkflow', {
        workflowId,
        args: [{ run: { ...run }, input, toldPlan: this.#publisher.toldPlan, prLoopStop: stop }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        typedSearchAttributes: [
          { key: SvcKind, value: 'pull-request' },
          { key: SvcState, value: run.state },
          ...(run.projectId ? [{ key: SvcProjectId, value: run.projectId }] : []),
        ],
        memo: { runId: run.id, prUrl: run.prUrl },
      }),
    );
    this.#pullRequestFollowed = true;
    // A cancel that came while the workflow was being started.
    if (this.prLoopStop && !stop) await this.#stopPullRequestLoop(this.prLoopStop);
  }

  async #stopPullRequestLoop(request: CancelRequest): Promise<void> {
    await CancellationScope.nonCancellable(() =>
      getExternalWorkflowHandle(pullRequestWorkflowId(this.run.id))
        .signal(cancelSignal, request)
        .catch(() => undefined),
    );
  }

  /** Ends the run cancelled, with the cancel's reason. */
  cancelled(): Promise<RunOutcome> {
    return this.finish('cancelled', null, now(), { reason: this.cancelRequest?.reason ?? null });
  }

  async #receiveSteer(message: NewInboxItem): Promise<void> {
    if (isTerminalRunState(this.run.state) || this.#inbox.some((item) => item.id === message.id)) return;
    const item: InboxItem = {
      ...message,
      seq: this.#inbox.length + 1,
      state: 'unread',
      deliveredAt: null,
      deliveredRunId: null,
    };
    this.#inbox.push(item);
    await this.publish(
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
  }
}
