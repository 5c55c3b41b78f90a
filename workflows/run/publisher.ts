// How a run tells the world about itself: its read-model projection (each one a growing version)
// and, for a plan-run's child, the plan-run's news. Shared by the run's workflow and, once the run
// has ended, by the workflow that follows its PR (workflows/pull-request.workflow.ts), which goes
// on from the version the run's workflow wrote last.
import { CancellationScope, getExternalWorkflowHandle } from '@temporalio/workflow';
import type { RunEventInput } from '../../activities/index.ts';
import type { InboxItem } from '../../core/inbox.ts';
import { childProgressOf } from '../../core/plan-model.ts';
import type { RunSnapshot, RunWorkflowInput } from '../../core/run-model.ts';
import { readModel } from '../activity-proxies.ts';
import { childRunProgressSignal } from '../messages.ts';

export class RunPublisher {
  readonly #run: RunSnapshot;
  readonly #planRun: RunWorkflowInput['planRun'];
  /** The state/PR-state last told to the parent plan-run. */
  toldPlan: string;

  constructor(run: RunSnapshot, planRun: RunWorkflowInput['planRun'], toldPlan = '') {
    this.#run = run;
    this.#planRun = planRun;
    this.toldPlan = toldPlan;
  }

  /**
   * Writes the run (and these events) to the read model, then tells the parent plan-run. Not
   * cancellable: a workflow cancellation asked in Temporal is turned into the run's own end, which
   * still has to be written.
   */
  publish(
    events: RunEventInput[],
    extra: { triggerFire?: RunWorkflowInput['triggerFire']; inbox?: InboxItem[] } = {},
  ): Promise<void> {
    return CancellationScope.nonCancellable(async () => {
      // The workflow is the run's only writer: each projection is newer than the one before.
      this.#run.projectionVersion += 1;
      await readModel.projectRun({
        snapshot: { ...this.#run },
        events,
        triggerFire: extra.triggerFire ?? null,
        inbox: extra.inbox ?? [],
      });
      await this.#tellPlan();
    });
  }

  /** Tells the parent plan-run, if any, about a change of the run's state or PR state. */
  async #tellPlan(): Promise<void> {
    const run = this.#run;
    if (!this.#planRun || `${run.state}/${run.prState}` === this.toldPlan) return;
    this.toldPlan = `${run.state}/${run.prState}`;
    const { planRunId, seq } = this.#planRun;
    // A plan-run that has ended (failed, cancelled) no longer listens; a resumed one asks afresh.
    await CancellationScope.nonCancellable(() =>
      getExternalWorkflowHandle(planRunId)
        .signal(childRunProgressSignal, { planRunId, seq, ...childProgressOf(run) })
        .catch(() => undefined),
    );
  }
}
