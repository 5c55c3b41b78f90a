// What broke, in words for an event: the activity that gave up and its last error, or the error
// itself. Workflow code: it imports only @temporalio/workflow.
import { ActivityFailure, ApplicationFailure } from '@temporalio/workflow';

export interface FailureDescription {
  message: string;
  activity?: string;
  type?: string;
}

export function describeFailure(error: unknown): FailureDescription {
  if (error instanceof ActivityFailure) {
    const cause = error.cause;
    return {
      message: cause?.message ?? error.message,
      activity: error.activityType,
      ...(cause instanceof ApplicationFailure && cause.type ? { type: cause.type } : {}),
    };
  }
  return { message: error instanceof Error ? error.message : String(error) };
}
