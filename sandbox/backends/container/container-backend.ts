// Whether this worker can run agents in containers: checked before a worker starts, and by
// `svc doctor --local`.
import { DockerEngine } from './docker-engine.ts';

/**
 * A worker refuses to start a container backend it cannot use: the engine must answer and hold the
 * default image (no registry is assumed: build it with scripts/build-agent-image). Answers the line
 * start-up prints.
 */
export async function containerBackendReady(settings: { engine: string; image: string }): Promise<string> {
  // Each run's own uid, and its workspace writable by it, need a root svc and a rootful engine.
  if (process.getuid?.() !== 0)
    throw new Error(
      'SVC_SANDBOX=container needs svc to run as root (each run gets an unprivileged uid of its own); ' +
        'use bubblewrap otherwise',
    );
  const engine = new DockerEngine(settings.engine);
  try {
    await engine.ping();
  } catch (error) {
    throw new Error(
      `SVC_SANDBOX=container: the container engine at ${settings.engine} does not answer ` +
        `(${(error as Error).message}); ` +
        'start one (e.g. `podman system service --time=0 unix:///run/podman/podman.sock`) or set SVC_CONTAINER_ENGINE',
    );
  }
  if (!(await engine.imageExists(settings.image)))
    throw new Error(
      `SVC_SANDBOX=container: the engine has no image ${settings.image}; build it with scripts/build-agent-image`,
    );
  return `sandbox: containers (${settings.image}) on the engine at ${settings.engine}`;
}
