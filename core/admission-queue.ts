// The rules of the admission queue (concurrency limits): which waiting runs may start
// now, and why the others wait. Pure, so the admission workflow (workflows/admission.workflow.ts)
// replays it and tests can drive it directly. Limits travel with each request: the latest request
// says what the instance's limit (SVC_MAX_CONCURRENT_RUNS) and its project's limit
// (admission.maxConcurrentRuns) are now, so a changed setting applies from the next dispatch on.

/**
 * The workflow id of an instance's one admission workflow: one per task queue, so svc instances
 * that share a Temporal namespace (each with its own task queue) keep their own queues.
 */
export const admissionWorkflowId = (taskQueue: string) => `svc-admission-${taskQueue}`;

/** A run's limits, as its dispatcher saw them; a run with neither never asks for admission. */
export interface RunAdmission {
  /** The instance's limit (SVC_MAX_CONCURRENT_RUNS), null when unset. */
  instanceLimit: number | null;
  /** The project's limit (`admission.maxConcurrentRuns` in .svc/config.yaml), null when unset. */
  projectLimit: number | null;
}

/** What a run asks of the admission workflow: a slot, in dispatch order. */
export interface AdmissionRequest extends RunAdmission {
  runId: string;
  projectId: string | null;
  /** The run's createdAt (epoch ms): waiting runs start in this order. */
  dispatchedAt: number;
}

/** Why a run waits: the cap it is behind. */
export interface AdmissionWait {
  cap: 'project' | 'instance';
  limit: number;
  /** Runs holding a slot under that cap when the run was told. */
  active: number;
  projectId: string | null;
}

/** A waiting run and what it was last told (so it is told again only when the reason changes). */
export interface Waiter extends AdmissionRequest {
  told: string | null;
}

/** The admission workflow's state: carried across continue-as-new. */
export interface AdmissionState {
  holders: AdmissionRequest[];
  waiters: Waiter[];
  instanceLimit: number | null;
  projectLimits: Record<string, number>;
}

/**
 * The admission workflow's signature (workflows/admission.workflow.ts), for the side that starts it
 * by name: activities take no types from workflows/ (test/architecture/workflow-contracts.test.ts).
 */
export type AdmissionWorkflow = (carried?: AdmissionState) => Promise<void>;

export const emptyAdmissionState = (): AdmissionState => ({
  holders: [],
  waiters: [],
  instanceLimit: null,
  projectLimits: {},
});

/** The run's limits to carry, or null when no limit applies (the run starts without asking). */
export function runAdmission(instanceLimit: number | null, projectLimit: number | null): RunAdmission | null {
  return instanceLimit === null && projectLimit === null ? null : { instanceLimit, projectLimit };
}

/**
 * Takes a request in. A repeated request (an activity retried) changes nothing; it answers
 * whether the run already holds a slot, so its grant can be sent again.
 */
export function enqueue(state: AdmissionState, request: AdmissionRequest): 'holder' | 'waiter' | 'new' {
  if (state.holders.some((holder) => holder.runId === request.runId)) return 'holder';
  if (state.waiters.some((waiter) => waiter.runId === request.runId)) return 'waiter';
  state.instanceLimit = request.instanceLimit;
  if (request.projectId) {
    if (request.projectLimit === null) delete state.projectLimits[request.projectId];
    else state.projectLimits[request.projectId] = request.projectLimit;
  }
  state.waiters.push({ ...request, told: null });
  state.waiters.sort(byDispatchOrder);
  return 'new';
}

/** A run that ended, or left the queue: its slot (or its place) is free. Answers whether it was known. */
export function release(state: AdmissionState, runId: string): boolean {
  const before = state.holders.length + state.waiters.length;
  state.holders = state.holders.filter((holder) => holder.runId !== runId);
  state.waiters = state.waiters.filter((waiter) => waiter.runId !== runId);
  return state.holders.length + state.waiters.length !== before;
}

/**
 * Admits, in dispatch order, every waiting run that fits under both caps; the others are answered
 * with the cap they wait behind. A run behind its project's cap does not hold up another project's.
 */
export function admit(state: AdmissionState): {
  granted: AdmissionRequest[];
  waiting: { waiter: Waiter; wait: AdmissionWait }[];
} {
  const perProject = new Map<string, number>();
  for (const holder of state.holders)
    if (holder.projectId) perProject.set(holder.projectId, (perProject.get(holder.projectId) ?? 0) + 1);
  const granted: AdmissionRequest[] = [];
  const waiting: { waiter: Waiter; wait: AdmissionWait }[] = [];
  const stillWaiting: Waiter[] = [];
  for (const waiter of state.waiters) {
    const projectLimit = waiter.projectId ? state.projectLimits[waiter.projectId] : undefined;
    const projectActive = waiter.projectId ? (perProject.get(waiter.projectId) ?? 0) : 0;
    const instanceActive = state.holders.length;
    let wait: AdmissionWait | null = null;
    if (projectLimit !== undefined && projectActive >= projectLimit)
      wait = { cap: 'project', limit: projectLimit, active: projectActive, projectId: waiter.projectId };
    else if (state.instanceLimit !== null && instanceActive >= state.instanceLimit)
      wait = { cap: 'instance', limit: state.instanceLimit, active: instanceActive, projectId: waiter.projectId };
    if (wait) {
      stillWaiting.push(waiter);
      waiting.push({ waiter, wait });
      continue;
    }
    const { told: _told, ...request } = waiter;
    state.holders.push(request);
    if (waiter.projectId) perProject.set(waiter.projectId, projectActive + 1);
    granted.push(request);
  }
  state.waiters = stillWaiting;
  return { granted, waiting };
}

/** What GET /runs/{id} says about a run that waits for a slot (`queueReason`). */
export function describeWait(wait: AdmissionWait): string {
  return wait.cap === 'project'
    ? `waiting for a slot: project ${wait.projectId} has ${wait.active} of its ${wait.limit} concurrent runs ` +
        '(admission.maxConcurrentRuns in .svc/config.yaml)'
    : `waiting for a slot: ${wait.active} of the instance's ${wait.limit} concurrent runs are taken ` +
        '(SVC_MAX_CONCURRENT_RUNS)';
}

function byDispatchOrder(a: AdmissionRequest, b: AdmissionRequest): number {
  return a.dispatchedAt - b.dispatchedAt || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0);
}
