// The state of one runWorkflow execution (workflows/run/run.workflow.ts registers the message
// handlers that change it): the run snapshot, the cancel request, the steering inbox, the finalize
// channel, the admission answer and the pause. Two ways for the run to tell the world about itself:
// publish() (the read-model projection, and the parent plan-run) and finish(), the one way a phase
// ends the run: it projects the terminal state and answers `Ended`.
import {
  allHandlersFinished,
  CancellationScope,
  condition,
  getExternalWorkflowHandle,
  ParentClosePolicy,
  startChild,
  upsertMemo,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { RunEventInput } from '../../activities/index.ts';
import { capRaiseProblem, type UsageTotals } from '../../core/cost-pause.ts';
import type { ServicePlan } from '../../core/environment-services.ts';
import { claimAll, unreadInClaimOrder, type InboxItem, type NewInboxItem } from '../../core/inbox.ts';
import {
  DEFAULT_RUN_TIMING,
  initialRunSnapshot,
  type RunOutcome,
  type RunSnapshot,
  type RunTiming,
  type RunWorkflowInput,
} from '../../core/run-model.ts';
import { isTerminalRunState, type RunFailureReason, type RunPhase, type RunState } from '../../core/run-states.ts';
import { pullRequestWorkflowId } from '../../core/run-workflows.ts';
import { SvcKind, SvcProjectId, SvcState } from '../../core/search-attributes.ts';
import type { FinalizeIntent, FinalizeResult } from '../../core/finalize.ts';
import type { McpServer } from '../../core/mcp-servers.ts';
import { cancelSignal, type CancelRequest } from '../messages.ts';
import { releaseAdmission } from './admission-release.ts';
import type { pullRequestWorkflow } from '../pull-request.workflow.ts';
import { now, systemEvent } from './events.ts';
import { RunPublisher } from './publisher.ts';

/** What a phase answers when the run ended there: its terminal state is projected, nothing else runs. */
/** The sandbox's finalize, as the run waits on it: the intent parked now, and its result once it comes. */
export interface FinalizeChannel {
  intent: FinalizeIntent | null;
  result: FinalizeResult | null;
}

export interface Ended {
  readonly ended: RunState;
}

export const isEnded = (value: unknown): value is Ended =>
  typeof value === 'object' && value !== null && 'ended' in value;

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
  /** The admission queue's answer, for a run under a concurrency limit (workflows/run/admission.ts). */
  readonly admission = { asked: false, granted: false, reason: null as string | null };
  /**
   * Pause at the cost cap (workflows/run/pause.ts): the agent's generation (1 until a resume), the
   * usage of the generations before it, and the cap an operator raised it to.
   */
  readonly pause = { generation: 1, usageBefore: null as UsageTotals | null, raisedTo: null as number | null };
  /** The run's services (.svc/environment.yaml), once asked to start: every generation's agent joins them. */
  services: ServicePlan[] | null = null;
  /** The MCP servers of the run's environment (references to secrets, not their values): every generation's. */
  mcp: McpServer[] | null = null;
  readonly #publisher: RunPublisher;
  /** The workflow following the run's PR, once started (a stop is passed on to it). */
  #pullRequestFollowed = false;

  constructor(input: RunWorkflowInput) {
    this.input = input;
    this.run = initialRunSnapshot(input);
    this.timing = input.timing ?? DEFAULT_RUN_TIMING;
    this.#publisher = new RunPublisher(this.run, input.planRun);
  }

  /** Writes the run (and these events) to the read model, then tells the parent plan-run (publisher.ts). */
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

  /** An operator raised the cap of the run paused at it; a raise that no longer fits is dropped. */
  raiseCostCap(maxCostUsd: number): void {
    if (!capRaiseProblem(this.run.pausedReason !== null, this.run.costUsd, maxCostUsd))
      this.pause.raisedTo = maxCostUsd;
  }

  /** The admission queue's answer: a grant stands; a reason to wait only matters until then. */
  admissionDecision(decision: { granted: true } | { granted: false; reason: string }): void {
    if (decision.granted) this.admission.granted = true;
    else if (!this.admission.granted) this.admission.reason = decision.reason;
  }

  /** The sandbox's finalize result, for the intent parked now only, once. */
  finalizeResult(attemptId: string, result: FinalizeResult): void {
    if (this.finalize.intent?.attemptId === attemptId && this.finalize.result === null) this.finalize.result = result;
  }

  /** Work the sandbox rescued itself: where it is now. */
  async salvaged(salvage: {
    trigger: string;
    salvageRef: string | null;
    salvagePath: string | null;
    notes: string[];
  }): Promise<void> {
    this.run.salvageRef = salvage.salvageRef ?? this.run.salvageRef;
    this.run.salvagePath = salvage.salvagePath ?? this.run.salvagePath;
    await this.publish([
      systemEvent(`salvage:pod:${salvage.trigger}`, 'reap.workspace_salvage_recorded', { source: 'pod', ...salvage }),
    ]);
  }

  /** The unread messages, in the order a claim delivers them. */
  unread(): InboxItem[] {
    return unreadInClaimOrder(this.#inbox);
  }

  /** Delivers every unread message, most important first; each message at most once. */
  async claimInbox(): Promise<InboxItem[]> {
    const at = now();
    const claimed = claimAll(this.#inbox, this.run.id, at);
    if (claimed.length) {
      await this.publish(
        claimed.map((item) => systemEvent(`steer:delivered:${item.id}`, 'steer.delivered', { messageId: item.id }, at)),
        { inbox: claimed },
      );
    }
    return claimed;
  }

  /** A steering message into the inbox (once per id, and only while the run has not ended). */
  async receiveSteer(message: NewInboxItem): Promise<void> {
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
        systemEvent(
          `steer:sent:${item.id}`,
          'steer.sent',
          { messageId: item.id, priority: item.priority, fromActor: item.fromActor },
          item.createdAt,
        ),
      ],
      { inbox: [{ ...item }] },
    );
  }

  /**
   * Ends the run: its terminal state projected with its terminal envelope (undelivered messages
   * marked failed). Every phase that ends the run answers what this answers.
   */
  async finish(
    state: RunState,
    failureReason: RunFailureReason | null,
    endedAt: string,
    detail: Record<string, unknown>,
  ): Promise<Ended> {
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
      events.push(systemEvent('cancel:requested', 'cancel.requested', { ...this.cancelRequest }, endedAt));
    events.push(
      systemEvent('state:terminal', 'state_change', { type: 'result', state, failureReason, ...detail }, endedAt),
    );
    run.queueReason = null;
    run.pausedReason = null;
    await this.publish(events, { inbox: undelivered.map((item) => ({ ...item })) });
    return { ended: state };
  }

  /** Ends the run cancelled, with the cancel's reason. */
  cancelled(): Promise<Ended> {
    return this.finish('cancelled', null, now(), { reason: this.cancelRequest?.reason ?? null });
  }

  /**
   * After the end: the run's slot is given back, and, once every handler is done, an open PR is
   * handed over to a workflow of its own. Answers the run's outcome.
   */
  async end(): Promise<RunOutcome> {
    const { run } = this;
    // The run's slot (or its place in the queue) is free for the next run.
    await releaseAdmission(this);
    await condition(allHandlersFinished);
    // A cancel that lost the race with a successful end still means "stop": the PR is only followed.
    this.prLoopStop ??= this.cancelRequest;
    // An open PR is followed by a workflow of its own; a PR loop's round leaves it to its run.
    if (run.prUrl && run.prState === 'open' && !this.input.followUp) await this.#handOverPullRequest();
    await condition(allHandlersFinished);
    const { state, failureReason } = run;
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
    await this.publish([systemEvent('pr:followed', 'pr.follow_started', { workflowId })]);
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
}
