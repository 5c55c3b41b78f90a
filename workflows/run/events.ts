// The workflows' clock and a run's system events, in one place: the run's phases, the workflow that
// follows its PR (workflows/pull-request.workflow.ts) and the plan-run's all take time and build
// events here.
import type { RunEventInput } from '../../activities/index.ts';

/** Workflow time as an ISO-8601 string (deterministic: the SDK's Date). */
export const now = (): string => new Date(Date.now()).toISOString();

/** Writes the run and these events to the read model (workflows/run/publisher.ts). */
export type Publish = (events: RunEventInput[]) => Promise<void>;

/** An event svc writes to a run's log (`stream: system`); `dedupeKey` is unique within the run. */
export function systemEvent(
  dedupeKey: string,
  kind: RunEventInput['kind'],
  payload: Record<string, unknown>,
  ts: string = now(),
): RunEventInput {
  return { dedupeKey, kind, stream: 'system', ts, payload };
}
