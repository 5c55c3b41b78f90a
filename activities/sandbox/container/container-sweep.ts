// The reconciler's sweep of the container backend: a container whose run ended a while ago is
// removed. Its supervisor removes it as the run ends; this catches the ones it could not (the
// engine did not answer then, the supervisor died with nobody left to take over).
import { RunEntity } from '../../../db/entities/index.ts';
import type { ReadModel } from '../../../db/orm.ts';
import { isTerminalRunState } from '../../../core/run-states.ts';
import { DockerEngine } from './docker-engine.ts';

/** Removes the containers of runs that ended before `cutoff`; answers their names. */
export async function sweepEndedSandboxes(engineAddress: string, readModel: ReadModel, cutoff: Date) {
  const engine = new DockerEngine(engineAddress);
  let containers;
  try {
    containers = await engine.listSandboxes();
  } catch {
    return []; // an engine that does not answer is swept at a later pass
  }
  const runOf = (label: string) => label.replace(/-finalize$/, '');
  const runIds = [...new Set(containers.map((container) => runOf(container.Labels['svc.sandbox'] ?? '')))];
  if (!runIds.length) return [];
  const ended = await readModel.em().find(RunEntity, { id: { $in: runIds } }, { fields: ['id', 'state', 'endedAt'] });
  const done = new Set(
    ended
      .filter((run) => isTerminalRunState(run.state) && run.endedAt && new Date(run.endedAt) < cutoff)
      .map((run) => run.id),
  );
  const swept: string[] = [];
  for (const container of containers) {
    const label = container.Labels['svc.sandbox'] ?? '';
    if (!done.has(runOf(label))) continue;
    await engine.remove(container.Id).catch(() => {});
    swept.push(`svc-${label}`);
  }
  return swept;
}
