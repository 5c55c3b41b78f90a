// The reconciler's sweep of sandboxes that outlive their runs (containers, pods): their supervisor
// removes them as the run ends; the sweep catches the ones it could not (the engine or API server
// did not answer then, the supervisor died with nobody left to take over).
import { RunEntity } from '../../db/entities/index.ts';
import type { ReadModel } from '../../db/orm.ts';
import { isTerminalRunState } from '../../core/run-states.ts';

/**
 * A sandbox the backend still has: its id and name (`<runId>`, `<runId>-finalize|-preview|-g<n>`, a
 * run's services `<runId>-services|-service-<name>`).
 */
export interface LeftoverSandbox {
  id: string;
  sandbox: string;
}

/** Removes the sandboxes of runs that ended before `cutoff`; answers the sandbox names removed. */
export async function sweepLeftovers(
  list: () => Promise<LeftoverSandbox[]>,
  remove: (id: string) => Promise<void>,
  readModel: ReadModel,
  cutoff: Date,
): Promise<string[]> {
  let leftovers: LeftoverSandbox[];
  try {
    leftovers = await list();
  } catch {
    return []; // a backend that does not answer is swept at a later pass
  }
  const runOf = (sandbox: string) => sandbox.replace(/-(finalize|preview|g\d+|services|service-[a-z0-9-]+)$/, '');
  const runIds = [...new Set(leftovers.map((leftover) => runOf(leftover.sandbox)))];
  if (!runIds.length) return [];
  const ended = await readModel
    .em()
    .find(RunEntity, { id: { $in: runIds } }, { fields: ['id', 'state', 'endedAt', 'previewState'] });
  const done = new Set(
    ended
      .filter((run) => isTerminalRunState(run.state) && run.endedAt && new Date(run.endedAt) < cutoff)
      .map((run) => run.id),
  );
  // A preview's sandbox lives on after its run ended, for as long as the preview does.
  const previewing = new Set(
    ended.filter((run) => run.previewState === 'starting' || run.previewState === 'live').map((run) => run.id),
  );
  const swept: string[] = [];
  for (const leftover of leftovers) {
    const runId = runOf(leftover.sandbox);
    if (!done.has(runId) || (leftover.sandbox.endsWith('-preview') && previewing.has(runId))) continue;
    await remove(leftover.id).catch(() => {});
    swept.push(leftover.id);
  }
  return swept;
}
