// What a run's sandbox says to its workflow through the API (api/services/sandbox-callbacks.service.ts):
// the finalize intent and result, a salvage, and its steering inbox. Each a Temporal call through
// the gateway, bounded by its deadline.
import type { FinalizeIntent, FinalizeResult } from '../../core/finalize.ts';
import type { InboxItem } from '../../core/inbox.ts';
import {
  claimInboxUpdate,
  finalizeResultSignal,
  finalizeStateQuery,
  inboxQuery,
  salvageSignal,
} from '../../workflows/messages.ts';
import type { TemporalGateway } from './temporal-gateway.ts';
import { isNotFound, toApiError } from './temporal-errors.ts';

/** The parked finalize intent and whether its result came in; undefined when the workflow is gone. */
export async function finalizeState(
  gateway: TemporalGateway,
  runId: string,
): Promise<{ intent: FinalizeIntent | null; received: boolean } | undefined> {
  try {
    return await gateway.call(() => gateway.client.workflow.getHandle(runId).query(finalizeStateQuery));
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw toApiError(error);
  }
}

export async function sendFinalizeResult(
  gateway: TemporalGateway,
  runId: string,
  attemptId: string,
  result: FinalizeResult,
): Promise<void> {
  try {
    await gateway.call(() =>
      gateway.client.workflow.getHandle(runId).signal(finalizeResultSignal, { attemptId, result }),
    );
  } catch (error) {
    throw toApiError(error);
  }
}

export async function recordSalvage(
  gateway: TemporalGateway,
  runId: string,
  salvage: { trigger: string; salvageRef: string | null; salvagePath: string | null; notes: string[] },
): Promise<void> {
  try {
    await gateway.call(() => gateway.client.workflow.getHandle(runId).signal(salvageSignal, salvage));
  } catch (error) {
    throw toApiError(error);
  }
}

/** Unread messages (peek) or claims them; undefined when the workflow has already ended. */
export async function inbox(gateway: TemporalGateway, runId: string, claim: boolean): Promise<InboxItem[] | undefined> {
  const handle = gateway.client.workflow.getHandle(runId);
  try {
    return await gateway.call(() => (claim ? handle.executeUpdate(claimInboxUpdate) : handle.query(inboxQuery)));
  } catch (error) {
    if (isNotFound(error) || /completed|already finished|not found/i.test(String((error as Error)?.message)))
      return undefined;
    throw toApiError(error);
  }
}
