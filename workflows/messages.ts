// Every signal, query and update the workflows answer, in one place, typed for both sides.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { FinalizeIntent, FinalizeResult } from '../core/finalize.ts';
import type { InboxItem, NewInboxItem } from '../core/inbox.ts';
import type { ChildRunProgress, PlanRunSnapshot } from '../core/plan-model.ts';
import type { TeardownAnswer } from '../core/preview.ts';
import type { RunSnapshot } from '../core/run-model.ts';
import type { HealAlertRequest, HealDecision } from '../core/healer-policy.ts';
import type { AdmissionRequest } from '../core/admission-queue.ts';
import type { Webhook } from '../core/webhooks.ts';

/** The run as the workflow holds it now. */
export const runSnapshotQuery = defineQuery<RunSnapshot>('runSnapshot');

export interface CancelRequest {
  reason: string | null;
  /** Who asked, for the run's event log (operator, plan-run, watchdog, cost cap). */
  requestedBy: string;
}

/** Stop the run: a queued run never starts; a running agent is stopped, then the run ends cancelled. */
export const cancelSignal = defineSignal<[CancelRequest]>('cancel');

/**
 * Raises the cost cap of a run paused at it (POST /runs/{id}/resume, which checked it): the run goes
 * on from its workspace. A signal, so no worker has to be up for it to be taken; one that finds the
 * run not paused, or a cap not above its spend (a race with a cancel or a second raise), is dropped.
 */
export const raiseCostCapSignal = defineSignal<[{ maxCostUsd: number; requestedBy: string }]>('raiseCostCap');

/** A steering message for the run's inbox (already validated by the API). */
export const steerSignal = defineSignal<[NewInboxItem]>('steer');

/** The inbox's unread messages in claim order, without claiming them (GET …/inbox?peek=1). */
export const inboxQuery = defineQuery<InboxItem[]>('inbox');

/** Claims every unread message: each is delivered at most once (GET …/inbox). */
export const claimInboxUpdate = defineUpdate<InboxItem[]>('claimInbox');

/**
 * Asked by prepareAndStartAgent once it has cut a clone, before it launches the agent: whether the
 * run was cancelled meanwhile (then the agent never starts) and how many messages came in (then
 * it claims them, to fold them into the prompt). A query: nothing in the history when both are no.
 */
export const startGateQuery = defineQuery<{ cancelRequested: boolean; unread: number }>('startGate');

/** The parked finalize intent (null until the agent has exited), and whether its result came in. */
export const finalizeStateQuery = defineQuery<{ intent: FinalizeIntent | null; received: boolean }>('finalizeState');

/** Work the sandbox rescued itself (POST /runs/{id}/salvage): where it is now. */
export const salvageSignal =
  defineSignal<[{ trigger: string; salvageRef: string | null; salvagePath: string | null; notes: string[] }]>(
    'salvage',
  );

/** The sandbox's finalize result, relayed by POST /runs/{id}/finalize-result. */
export const finalizeResultSignal = defineSignal<[{ attemptId: string; result: FinalizeResult }]>('finalizeResult');

/** The plan-run as its workflow holds it now. */
export const planRunSnapshotQuery = defineQuery<PlanRunSnapshot>('planRunSnapshot');

/** Stop the plan-run: its in-flight child run is cancelled, no further child is dispatched. */
export const cancelPlanRunSignal = defineSignal<[CancelRequest]>('cancelPlanRun');

/** A child run's news for its plan-run: sent by the run itself on every change of state or PR state. */
export const childRunProgressSignal = defineSignal<[ChildRunProgress]>('childRunProgress');

/** An alert for a project's healer workflow: answers whether to dispatch a healer run now. */
export const healAlertUpdate = defineUpdate<HealDecision, [HealAlertRequest]>('healAlert');

/** The API dispatched (or found) the healer run of an attempt: the attempt now counts. */
export const healerRunStartedSignal = defineSignal<[{ attempt: number; runId: string }]>('healerRunStarted');

/** The API could not dispatch an attempt (a business error): it is forgotten, as if never made. */
export const healerDispatchFailedSignal = defineSignal<[{ attempt: number }]>('healerDispatchFailed');

/** The healer runs the project's memory still counts as unfinished: the API asks the read model which ended. */
export const healerUnfinishedRunsQuery = defineQuery<string[]>('healerUnfinishedRuns');

/** Someone used the run's preview (the proxy, at most every 30 s per run): its idle clock restarts. */
export const previewHitSignal = defineSignal<[{ at: string }]>('previewHit');

/** Tear the run's preview down now (POST /runs/{id}/preview/teardown): answers once it is down. */
export const previewTeardownUpdate = defineUpdate<TeardownAnswer, [{ actor: string }]>('previewTeardown');

/** A run asks the admission workflow for a slot (sent with signal-with-start by an activity). */
export const admissionRequestSignal = defineSignal<[AdmissionRequest]>('admissionRequest');

/** A run that ended (or was cancelled while it waited) gives its slot, or its place, back. */
export const admissionReleaseSignal = defineSignal<[{ runId: string }]>('admissionRelease');

/** The admission workflow's answer to a run: it may start, or why it still waits. */
export const admissionDecisionSignal =
  defineSignal<[{ granted: true } | { granted: false; reason: string }]>('admissionDecision');

/** Registers (or replaces, by id) a webhook: answers once the read model lists it. */
export const addWebhookUpdate = defineUpdate<Webhook, [Webhook & { ifAbsent?: boolean }]>('addWebhook');

/** Removes a webhook (its deliveries under way stop at their next attempt): answers whether it existed. */
export const removeWebhookUpdate = defineUpdate<boolean, [{ id: string }]>('removeWebhook');

/** The workers' SVC_WEBHOOKS, which replace every `config` webhook: answers how many there are. */
export const syncConfiguredWebhooksUpdate = defineUpdate<number, [Webhook[]]>('syncConfiguredWebhooks');
