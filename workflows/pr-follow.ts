// Following an ended run's open PR (workflows/pull-request.workflow.ts): a look at the forge now
// and then, with a growing interval, and the PR's new state on the run and in its log.
import { sleep } from '@temporalio/workflow';
import type { RunSnapshot, RunTiming } from '../core/run-model.ts';
import { finalizeIo } from './activity-proxies.ts';
import { systemEvent, type Publish } from './run/events.ts';

/** Polls the PR with a growing interval until it is merged or closed (or the watch expires). */
export async function watchPullRequest(run: RunSnapshot, timing: RunTiming, publish: Publish): Promise<void> {
  if (!run.prUrl || run.prState !== 'open') return;
  const until = Date.now() + timing.prWatchMaxMs;
  let interval = timing.prPollMinMs;
  while (Date.now() < until) {
    await sleep(interval);
    interval = Math.min(interval * 2, timing.prPollMaxMs);
    let pr;
    try {
      pr = await finalizeIo.checkPullRequest({ prUrl: run.prUrl });
    } catch {
      continue; // the forge is down or rate-limited: look again later
    }
    if (pr.state === run.prState) continue;
    if (!(await publishPrState(run, pr, publish))) return;
  }
}

/** The PR's new state, on the run and in its log; answers whether the PR is still open. */
export async function publishPrState(
  run: RunSnapshot,
  pr: { state: NonNullable<RunSnapshot['prState']>; mergedAt: string | null },
  publish: Publish,
): Promise<boolean> {
  run.prState = pr.state;
  run.prMergedAt = pr.mergedAt;
  await publish([
    systemEvent(`pr:${pr.state}`, 'pr.state_changed', { prUrl: run.prUrl, prState: pr.state, prMergedAt: pr.mergedAt }),
  ]);
  return pr.state === 'open';
}
