// The reconciler's sweep of the container backend (sandbox-sweep.ts): containers of ended runs.
import type { ReadModel } from '../../../db/orm.ts';
import { sweepLeftovers } from '../../host/sandbox-sweep.ts';
import { DockerEngine } from './docker-engine.ts';

/** Removes the containers of runs that ended before `cutoff`; answers their names. */
export async function sweepEndedSandboxes(engineAddress: string, readModel: ReadModel, cutoff: Date) {
  const engine = new DockerEngine(engineAddress);
  const names = new Map<string, string>();
  const swept = await sweepLeftovers(
    async () =>
      (await engine.listSandboxes())
        .map((container) => {
          const sandbox = container.Labels['svc.sandbox'] ?? '';
          names.set(container.Id, `svc-${sandbox}`);
          return { id: container.Id, sandbox };
        })
        // A run's services holder goes last: the engine keeps it while a container shares its network.
        .sort((a, b) => Number(a.sandbox.endsWith('-services')) - Number(b.sandbox.endsWith('-services'))),
    (id) => engine.remove(id),
    readModel,
    cutoff,
  );
  return swept.map((id) => names.get(id) ?? id);
}
