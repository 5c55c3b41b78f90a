// When a plan-run's detail is behind its own runs. The plan-run workflow projects its children
// after their runs project themselves (a run's news reaches the plan by signal), and the
// lifecycle line that makes the page re-read comes with the run's row: a read in between shows
// the run already running or ended, its child not yet. Nothing else may follow to say so (a child
// going running writes no plan event), so the page re-reads until the two agree.
import type { PlanRunDetail, RunState } from './types.ts';

type Child = PlanRunDetail['children'][number];
type ChildRun = PlanRunDetail['runs'][number];

// The dashboard takes only types from the server (its lint rule): the two states these rules need.
const runEnded = (state: RunState) => state !== 'queued' && state !== 'running';
const childSettled = (child: Child) => child.state === 'merged' || child.state === 'skipped';

/** The child's state is one its workflow must still move it out of, given its run's row. */
export function childLagsItsRun(child: Child, run: ChildRun | undefined): boolean {
  if (!run) return false;
  switch (child.state) {
    case 'dispatched':
      return run.state !== 'queued';
    case 'running':
      return runEnded(run.state);
    case 'pr_open':
      return run.prState === 'merged' || run.prState === 'closed_unmerged';
    default:
      return false;
  }
}

/**
 * True while the detail shows something its workflow has already moved past: a child behind its
 * run, or a plan-run still active when no child is left to run (all merged or skipped) or one failed.
 */
export function planRunLagsItsRuns(detail: PlanRunDetail): boolean {
  const { planRun, children, runs } = detail;
  const runsById = new Map(runs.map((run) => [run.id, run]));
  if (children.some((child) => childLagsItsRun(child, child.runId ? runsById.get(child.runId) : undefined)))
    return true;
  if (planRun.state !== 'running' || children.length === 0) return false;
  return children.every(childSettled) || children.some((child) => child.state === 'failed');
}
