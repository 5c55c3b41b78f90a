// admissionWorkflow: the instance's one admission queue (`svc-admission-<task queue>`), a durable
// semaphore in the shape of Temporal's mutex samples. A run whose dispatcher saw a concurrency
// limit asks it for a slot before it cuts its workspace (signal-with-start, by an activity); the
// queue grants slots in dispatch order (core/admission-queue.ts) and tells a waiting run why it
// waits; a run gives its slot back when it reaches its terminal state. Holders whose workflow
// closed without a word (terminated by hand) are found by a sweep. Runs forever, by continue-as-new.
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import {
  admit,
  describeWait,
  emptyAdmissionState,
  enqueue,
  release,
  type AdmissionState,
} from '../core/admission-queue.ts';
import { admissionIo } from './activity-proxies.ts';
import { admissionDecisionSignal, admissionReleaseSignal, admissionRequestSignal } from './messages.ts';

/** How often, while runs wait, the queue looks for holders whose workflow closed without a word. */
const SWEEP_INTERVAL_MS = 60_000;

/** The queue's state and its message handlers: requests and releases only mark it changed. */
class AdmissionQueue {
  readonly state: AdmissionState;
  /** Runs whose grant must be sent (new, or asked again by a retried request). */
  readonly #regrant = new Set<string>();
  changed = true;

  constructor(state: AdmissionState) {
    this.state = state;
    setHandler(admissionRequestSignal, (request) => {
      if (enqueue(this.state, request) === 'holder') this.#regrant.add(request.runId);
      this.changed = true;
    });
    setHandler(admissionReleaseSignal, ({ runId }) => {
      if (release(this.state, runId)) this.changed = true;
    });
  }

  /** Grants what fits, tells the waiting runs whose reason changed; a run that is gone gives its slot back. */
  async settle(): Promise<void> {
    while (this.changed) {
      this.changed = false;
      const { granted, waiting } = admit(this.state);
      const grants = [...granted.map((request) => request.runId), ...this.#regrant];
      this.#regrant.clear();
      const told = waiting.flatMap(({ waiter, wait }) => {
        const reason = describeWait(wait);
        if (waiter.told === reason) return [];
        waiter.told = reason;
        return [{ runId: waiter.runId, reason }];
      });
      await Promise.all([
        ...grants.map((runId) => this.#tell(runId, { granted: true })),
        ...told.map(({ runId, reason }) => this.#tell(runId, { granted: false, reason })),
      ]);
    }
  }

  /** Holders whose workflow has closed (terminated, or lost its release) free their slots. */
  async sweep(): Promise<void> {
    const closed = await admissionIo.closedRuns({ runIds: this.state.holders.map((holder) => holder.runId) });
    for (const runId of closed) if (release(this.state, runId)) this.changed = true;
  }

  async #tell(runId: string, decision: { granted: true } | { granted: false; reason: string }): Promise<void> {
    try {
      await getExternalWorkflowHandle(runId).signal(admissionDecisionSignal, decision);
    } catch {
      // The run's workflow has closed: whatever it held or waited for is free.
      if (release(this.state, runId)) this.changed = true;
    }
  }
}

/** The admission queue, from its carried state (empty at the first signal-with-start). */
export async function admissionWorkflow(carried?: AdmissionState): Promise<void> {
  const queue = new AdmissionQueue(carried ?? emptyAdmissionState());
  let lastSweep = Date.now();
  for (;;) {
    await queue.settle();
    if (workflowInfo().continueAsNewSuggested) break;
    const sweeping = queue.state.waiters.length > 0 && queue.state.holders.length > 0;
    const wakes = () => queue.changed || workflowInfo().continueAsNewSuggested;
    if (!sweeping) {
      await condition(wakes);
      lastSweep = Date.now();
      continue;
    }
    // Due by the clock, not by quiet: a busy queue (requests every few seconds) is swept too.
    const due = lastSweep + SWEEP_INTERVAL_MS - Date.now();
    if (due > 0) await condition(wakes, due);
    if (Date.now() - lastSweep >= SWEEP_INTERVAL_MS) {
      lastSweep = Date.now();
      await queue.sweep();
    }
  }
  await condition(allHandlersFinished);
  await queue.settle();
  await continueAsNew<typeof admissionWorkflow>(queue.state);
}
