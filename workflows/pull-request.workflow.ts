// pullRequestWorkflow: a run's open PR, followed after the run has ended (workflow id
// `<run id>-pr`, core/run-workflows.ts). The run's workflow starts it as an abandoned child just
// before it closes, handing over the run as it ended: this workflow watches the PR until it is
// merged or closed, answers it (the PR loop, workflows/pr-loop.ts), and shows the run's preview
// (workflows/run-preview.ts) meanwhile. It writes the run's read-model row on from the version the
// run's workflow wrote last, and tells the run's plan-run when the PR is merged.
import { allHandlersFinished, condition, setHandler } from '@temporalio/workflow';
import type { RunSnapshot } from '../core/run-model.ts';
import { DEFAULT_RUN_TIMING } from '../core/run-model.ts';
import type { PullRequestWorkflowInput } from '../core/run-workflows.ts';
import {
  cancelSignal,
  previewHitSignal,
  previewTeardownUpdate,
  runSnapshotQuery,
  type CancelRequest,
} from './messages.ts';
import { answerPullRequest } from './pr-loop.ts';
import { runPreview, tearDownPreview, type PreviewChannel } from './run-preview.ts';
import { watchPullRequest } from './pr-follow.ts';
import type { Publish } from './run/events.ts';
import { RunPublisher } from './run/publisher.ts';

/** Where the PR stood when the workflow ended. */
export interface PullRequestOutcome {
  runId: string;
  prUrl: string | null;
  prState: RunSnapshot['prState'];
  prMergedAt: string | null;
}

/**
 * Follows the ended run's PR until it is merged or closed (or the watch ends): answered when the
 * project asks for a PR loop, only watched otherwise; a successful run's preview lives meanwhile.
 */
export async function pullRequestWorkflow({
  run,
  input,
  toldPlan,
  prLoopStop,
}: PullRequestWorkflowInput): Promise<PullRequestOutcome> {
  const timing = input.timing ?? DEFAULT_RUN_TIMING;
  // The workflow writes the run's row on from the version the run's workflow wrote last.
  const publisher = new RunPublisher(run, input.planRun, toldPlan);
  const publish: Publish = (events) => publisher.publish(events);
  // A cancel of the ended run (POST /runs/{id}/cancel): it stops the PR loop (workflows/pr-loop.ts).
  let stop: CancelRequest | null = prLoopStop;
  // The preview's messages from the API (workflows/run-preview.ts).
  const preview: PreviewChannel = { lastHitAt: null, teardown: null, answer: null };
  setHandler(runSnapshotQuery, () => run);
  setHandler(cancelSignal, (request) => void (stop ??= request));
  setHandler(previewHitSignal, ({ at }) => {
    const ms = Date.parse(at);
    // A visit the proxy saw live can reach a new worker before the step that made the preview
    // live is replayed there (the worker died just after it was shown): it counts all the same.
    const { previewState } = run;
    if ((previewState === 'live' || previewState === 'starting') && Number.isFinite(ms)) preview.lastHitAt = ms;
  });
  setHandler(previewTeardownUpdate, (request) => tearDownPreview(run, preview, request));

  const previewing = input.preview && run.state === 'succeeded' && run.prState === 'open';
  await Promise.all([
    // The PR loop answers the PR; stopped by an operator, the PR is still followed, no longer answered.
    input.prLoop
      ? answerPullRequest(run, input, timing, publish, () => stop !== null).then((end) =>
          end === 'stopped' ? watchPullRequest(run, timing, publish) : undefined,
        )
      : watchPullRequest(run, timing, publish),
    previewing ? runPreview(run, input.preview!, input.sandbox, preview, publish) : undefined,
  ]);
  await condition(allHandlersFinished);
  return { runId: run.id, prUrl: run.prUrl, prState: run.prState, prMergedAt: run.prMergedAt };
}
