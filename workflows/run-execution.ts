// The state of one runWorkflow execution and its message handlers, in one small class (the shape
// of samples-typescript's safe-message-handlers): the run snapshot, the cancel request, the
// steering inbox, the finalize channel, and the two ways the run tells the world about itself:
// publish() (the read-model projection, and the parent plan-run) and finish() (its terminal state).
import {
  allHandlersFinished,
  condition,
  getExternalWorkflowHandle,
  patched,
  setHandler,
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
import { SvcState } from '../core/search-attributes.ts';
import { readModel } from './activity-proxies.ts';
import {
  admissionDecisionSignal,
  admissionReleaseSignal,
  cancelSignal,
  childRunProgressSignal,
  claimInboxUpdate,
  finalizeResultSignal,
  finalizeStateQuery,
  inboxQuery,
  previewHitSignal,
  previewTeardownUpdate,
  raiseCostCapSignal,
  runAcceptedUpdate,
  runSnapshotQuery,
  salvageSignal,
  startGateQuery,
  steerSignal,
  type CancelRequest,
} from './messages.ts';
import { watchPullRequest, type FinalizeChannel } from './run-tail.ts';
import { runPreview, tearDownPreview, type PreviewChannel } from './run-preview.ts';
import { answerPullRequest } from './pr-loop.ts';
import { PATCHES } from './patches.ts';
import { childProgressOf } from '../core/plan-model.ts';
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
  /** A cancel that came after the run ended: it stops the PR loop (workflows/pr-loop.ts). */
  prLoopStop: CancelRequest | null = null;
  /** Where the run is: a failure that escapes a phase ends the run with that phase's reason. */
  phase: RunPhase = 'accepting';
  /** The sandbox fetches the parked intent and posts its result for that attempt only. */
  readonly finalize: FinalizeChannel = { intent: null, result: null };
  /** The steering inbox: the API validates a message and signals it; claims are updates. */
  readonly #inbox: InboxItem[] = [];
  #accepted = false;
  /** The preview's messages from the API (workflows/run-preview.ts). */
  readonly preview: PreviewChannel = { lastHitAt: null, teardown: null, answer: null };
  /** The admission queue's answer, for a run under a concurrency limit (workflows/run.workflow.ts admit). */
  readonly admission = { asked: false, granted: false, reason: null as string | null };
  /**
   * Pause at the cost cap (workflows/run-pause.ts): the agent's generation (1 until a resume), the
   * usage of the generations before it, and the cap an operator raised it to.
   */
  readonly pause = { generation: 1, usageBefore: null as UsageTotals | null, raisedTo: null as number | null };
  /** The state/PR-state last told to the parent plan-run. */
  #toldPlan = '';
  /** Past the startProjectsRunning patch (workflows/run-start.ts): it stands for runWatchdogs too. */
  startProjectsRunning = false;

  constructor(input: RunWorkflowInput) {
    this.input = input;
    this.run = initialRunSnapshot(input);
    this.timing = input.timing ?? DEFAULT_RUN_TIMING;
    setHandler(runSnapshotQuery, () => this.run);
    setHandler(runAcceptedUpdate, async () => {
      await condition(() => this.#accepted);
      return this.run;
    });
    setHandler(cancelSignal, (request) => {
      // A run that has ended may still answer its PR: a cancel then stops that loop (docs/pr-loop.md).
      if (isTerminalRunState(this.run.state)) this.prLoopStop ??= request;
      this.cancelRequest ??= request;
    });
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
    setHandler(previewHitSignal, ({ at }) => {
      const ms = Date.parse(at);
      // A visit the proxy saw live can reach a new worker before the step that made the preview
      // live is replayed there (the worker died just after it was shown): it counts all the same.
      const { previewState } = this.run;
      const open = previewState === 'live' || (previewState === 'starting' && patched(PATCHES.previewHitShown));
      if (open && Number.isFinite(ms)) this.preview.lastHitAt = ms;
    });
    setHandler(previewTeardownUpdate, (request) => tearDownPreview(this.run, this.preview, request));
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

  /** The run is in the read model: the dispatcher's update may answer. */
  markAccepted(): void {
    this.#accepted = true;
  }

  /** Writes the run (and these events) to the read model, then tells the parent plan-run (tellPlan). */
  async publish(
    events: RunEventInput[],
    extra: { triggerFire?: RunWorkflowInput['triggerFire']; inbox?: InboxItem[] } = {},
  ): Promise<void> {
    await readModel.projectRun({
      snapshot: this.reserveProjection(),
      events,
      triggerFire: extra.triggerFire ?? null,
      inbox: extra.inbox ?? [],
    });
    await this.tellPlan();
  }

  /** Counts one more projection of the run (an activity writes it) and answers the run as it is now. */
  reserveProjection(): RunSnapshot {
    this.run.projectionVersion += 1;
    return { ...this.run };
  }

  /** Tells the parent plan-run, if any, about a change of the run's state or PR state. */
  async tellPlan(): Promise<void> {
    const { run, input } = this;
    if (!input.planRun || `${run.state}/${run.prState}` === this.#toldPlan) return;
    this.#toldPlan = `${run.state}/${run.prState}`;
    const { planRunId, seq } = input.planRun;
    // A plan-run that has ended (failed, cancelled) no longer listens; a resumed one asks afresh.
    await getExternalWorkflowHandle(planRunId)
      .signal(childRunProgressSignal, { planRunId, seq, ...childProgressOf(run) })
      .catch(() => undefined);
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
   * failed), then, once every handler is done, the run keeps following its pull request.
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
      await getExternalWorkflowHandle(admissionWorkflowId(workflowInfo().taskQueue))
        .signal(admissionReleaseSignal, { runId: run.id })
        .catch(() => undefined);
    await condition(allHandlersFinished);
    // A terminal run still follows its pull request until it is merged or closed; a successful
    // one with an open PR shows its preview meanwhile.
    const publish = (more: RunEventInput[]) => this.publish(more);
    const { preview, followUp, prLoop } = this.input;
    // A cancel that lost the race with a successful end still means "stop": the PR is only followed.
    this.prLoopStop ??= this.cancelRequest;
    // A PR loop's round leaves the PR (and its preview) to the run that opened it.
    const previewing =
      !followUp && preview && state === 'succeeded' && run.prState === 'open' && patched(PATCHES.previews);
    await Promise.all([
      followUp
        ? undefined
        : prLoop
          ? answerPullRequest(run, this.input, this.timing, publish, () => this.prLoopStop !== null).then(
              // Stopped by an operator: the PR is still followed, no longer answered.
              (end) => (end === 'stopped' ? watchPullRequest(run, this.timing, publish) : undefined),
            )
          : watchPullRequest(run, this.timing, publish),
      previewing ? runPreview(run, preview, this.input.sandbox, this.preview, publish) : undefined,
    ]);
    await condition(allHandlersFinished);
    return { runId: run.id, state, failureReason, prUrl: run.prUrl, prState: run.prState, costUsd: run.costUsd };
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
