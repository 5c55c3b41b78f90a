// What Temporal's answers mean to the API: a workflow failure typed by its activity
// (project_unavailable, not_found, ref_not_found) becomes that API error; Temporal out of reach
// becomes 503 runtime_unreachable naming the gRPC code; and bounded waits on a workflow's result.
import {
  ActivityFailure,
  ApplicationFailure,
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowNotFoundError,
} from '@temporalio/client';
import { Errors } from '../errors.ts';

/** Waits (bounded) for a workflow's result: undefined if it is not done in time. */
export async function awaitResult<R>(handle: { result(): Promise<R> }, waitMs: number): Promise<R | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), waitMs)));
  try {
    return await Promise.race([handle.result(), timeout]);
  } catch (error) {
    throw toApiError(error);
  } finally {
    clearTimeout(timer);
  }
}

/** The innermost ApplicationFailure of a workflow failure, whose `type` carries our error code. */
function applicationCause(error: unknown): ApplicationFailure | undefined {
  let current: unknown = error;
  while (current) {
    if (current instanceof ApplicationFailure) return current;
    if (
      current instanceof WorkflowFailedError ||
      current instanceof ActivityFailure ||
      (current as { cause?: unknown }).cause
    )
      current = (current as { cause?: unknown }).cause;
    else return undefined;
  }
  return undefined;
}

export function toApiError(error: unknown): unknown {
  if (error instanceof WorkflowExecutionAlreadyStartedError)
    return Errors.conflict('the same operation is already running for this project', 'wait for it to finish and retry');
  const cause = applicationCause(error);
  if (cause?.type === 'project_unavailable') return Errors.projectUnavailable(cause.message);
  if (cause?.type === 'not_found') return Errors.notFound(cause.message.replace(/ not found$/, ''));
  if (cause?.type === 'ref_not_found') return Errors.refNotFound(cause.message);
  if (cause?.type === 'diff_unavailable') return Errors.runDiffUnavailable(cause.message);
  return wrapConnectionError(error);
}

/** Temporal says there is no such workflow (typed by the client, or a bare gRPC NOT_FOUND). */
export function isNotFound(error: unknown): boolean {
  return (
    error instanceof WorkflowNotFoundError ||
    (error as { code?: number })?.code === 5 ||
    /NOT_FOUND/.test(String((error as Error)?.message))
  );
}

/** A signal to a workflow that has already closed. */
export function isClosed(error: unknown): boolean {
  return /already completed|already finished|workflow execution already/i.test(String((error as Error)?.message));
}

const GRPC_CODES: Record<number, string> = {
  4: 'DEADLINE_EXCEEDED',
  14: 'UNAVAILABLE',
  8: 'RESOURCE_EXHAUSTED',
  1: 'CANCELLED',
};

/** Temporal out of reach (unavailable, too slow, overloaded) is a 503 naming the gRPC code. */
export function wrapConnectionError(error: unknown): unknown {
  const message = String((error as Error)?.message ?? error);
  const code = (error as { code?: number })?.code ?? (error as { cause?: { code?: number } })?.cause?.code;
  const grpc = code !== undefined ? GRPC_CODES[code] : undefined;
  if (grpc || /UNAVAILABLE|ECONNREFUSED|DEADLINE_EXCEEDED|Connection|transport|deadline/i.test(message))
    return Errors.temporalUnavailable(`${grpc ? `gRPC ${grpc}: ` : ''}${message}`.slice(0, 500));
  return error;
}
