// What a worker learns of its container engine once: which engine it is (Podman takes a seccomp
// profile as a path, Docker as JSON) and how it manages cgroups. Asking costs Podman about half a
// second, so a worker asks once per engine and hands the answer to every sandbox it launches.
import { DockerEngine } from './docker-engine.ts';
import type { EngineFacts } from '../../spec.ts';

const known = new Map<string, Promise<EngineFacts>>();

export async function askEngineFacts(engine: DockerEngine): Promise<EngineFacts> {
  const info = await engine.info();
  return {
    podman: info.Components?.some((component) => /podman/i.test(component.Name)) ?? false,
    cgroupDriver: info.CgroupDriver ?? null,
  };
}

/** The facts of the engine at `address`, asked once per process (again after a failure). */
export function engineFacts(address: string): Promise<EngineFacts> {
  let facts = known.get(address);
  if (!facts) {
    facts = askEngineFacts(new DockerEngine(address));
    facts.catch(() => known.delete(address));
    known.set(address, facts);
  }
  return facts;
}
