// The dashboard's rule for a plan-run detail that trails its runs (web/src/api/plan-run-lag.ts):
// the page re-reads while it holds, so each case here is a read the page would otherwise keep.
import test from 'ava';
import { planRunLagsItsRuns } from '../../web/src/api/plan-run-lag.ts';
import type { PlanRunDetail } from '../../web/src/api/types.ts';

type ChildRow = { state: string; runId?: string | null };
type RunRow = { id: string; state: string; prState?: string | null };

function detail(planState: string, children: ChildRow[], runs: RunRow[]): PlanRunDetail {
  return {
    planRun: { id: 'plnr_1', state: planState },
    children: children.map((child, index) => ({ seq: index + 1, seedId: `s-${index}`, runId: null, ...child })),
    runs: runs.map((run) => ({ prState: null, ...run })),
  } as unknown as PlanRunDetail;
}

test('a child still dispatched while its run already runs or ended trails its run', (t) => {
  for (const runState of ['running', 'succeeded', 'failed', 'cancelled'])
    t.true(
      planRunLagsItsRuns(detail('running', [{ state: 'dispatched', runId: 'r1' }], [{ id: 'r1', state: runState }])),
      runState,
    );
  t.false(
    planRunLagsItsRuns(detail('running', [{ state: 'dispatched', runId: 'r1' }], [{ id: 'r1', state: 'queued' }])),
  );
});

test('a child running while its run ended, or with a PR open that merged or closed, trails its run', (t) => {
  t.true(
    planRunLagsItsRuns(detail('running', [{ state: 'running', runId: 'r1' }], [{ id: 'r1', state: 'succeeded' }])),
  );
  t.false(planRunLagsItsRuns(detail('running', [{ state: 'running', runId: 'r1' }], [{ id: 'r1', state: 'running' }])));
  const prOpen = (prState: string) =>
    detail('running', [{ state: 'pr_open', runId: 'r1' }], [{ id: 'r1', state: 'succeeded', prState }]);
  t.true(planRunLagsItsRuns(prOpen('merged')));
  t.true(planRunLagsItsRuns(prOpen('closed_unmerged')));
  t.false(planRunLagsItsRuns(prOpen('open')));
});

test('a plan-run still running with every child settled, or one failed, trails its children', (t) => {
  t.true(planRunLagsItsRuns(detail('running', [{ state: 'merged' }, { state: 'skipped' }], [])));
  t.true(planRunLagsItsRuns(detail('running', [{ state: 'merged' }, { state: 'failed' }], [])));
  t.false(planRunLagsItsRuns(detail('succeeded', [{ state: 'merged' }, { state: 'skipped' }], [])));
  t.false(planRunLagsItsRuns(detail('failed', [{ state: 'merged' }, { state: 'failed' }], [])));
});

test('a plan-run between children, or not yet started, is not behind', (t) => {
  t.false(planRunLagsItsRuns(detail('running', [{ state: 'merged' }, { state: 'pending' }], [])));
  t.false(planRunLagsItsRuns(detail('queued', [{ state: 'pending' }, { state: 'pending' }], [])));
  t.false(planRunLagsItsRuns(detail('running', [], [])));
  // A child whose run the detail does not carry: nothing to compare it with.
  t.false(planRunLagsItsRuns(detail('running', [{ state: 'dispatched', runId: 'r9' }], [])));
});
