// The I/O of a run's services (`services` in .svc/environment.yaml, core/environment-services.ts): started
// beside the run's agent on the container backend before it starts (sandbox/backends/container/
// container-services.ts), waited for until each is ready or its bound passes, removed when the run
// ends. On Kubernetes they are containers of the run's pod (pod-launch.ts): the pod's harness waits
// for them, and they go with the pod; here they are only checked. Another backend refuses them. A
// service is repository content, as hostile as the agent: it gets the run's limits and uid, the env
// its file names, and nothing of svc's.
import { join } from 'node:path';
import { Context, heartbeat } from '@temporalio/activity';
import type { ServiceFailure, ServicePlan } from '../core/environment-services.ts';
import type { ProjectSandboxSettings } from '../core/run-model.ts';
import { dataPaths } from '../platform/config.ts';
import { agentImageRefusal, sandboxCpuLimit } from '../platform/sandbox-settings.ts';
import { appendRunEvents } from './read-model/run-projection.ts';
import type { RunActivityDeps } from './run-activities.ts';
import {
  chooseIsolation,
  createMemoryCgroup,
  imageRefusal,
  probeService,
  removeServices,
  sandboxHostId,
  serviceLogTail,
  serviceStartedAt,
  startServices,
} from '../sandbox/index.ts';

/** How often the services are asked whether they are ready. */
const PROBE_EVERY_MS = 500;

export type ServicesStart =
  { ok: true } | { ok: false; reason: 'environment_invalid' | 'environment_services_failed'; message: string };

export type ServicesReady = { ok: true } | ({ ok: false } & ServiceFailure);

export function createEnvironmentServiceActivities(deps: RunActivityDeps) {
  const engine = deps.sandbox.container.engine;
  /** A pod's services are its own containers: its harness waits for them, and they end with it. */
  const inPod = () => {
    try {
      return chooseIsolation(deps.sandbox) === 'kubernetes';
    } catch {
      return false;
    }
  };
  return {
    /**
     * Starts the run's services (once: a retry finds the containers), or says why not: a backend
     * without them, an image the operator does not allow, or the engine's refusal.
     */
    async startEnvironmentServices({
      runId,
      services,
      image,
      memoryLimitMiB,
      cpuMillicores,
    }: { runId: string; services: ServicePlan[] } & ProjectSandboxSettings): Promise<ServicesStart> {
      const invalid = (message: string) => ({ ok: false, reason: 'environment_invalid', message }) as const;
      let isolation;
      try {
        isolation = chooseIsolation(deps.sandbox);
      } catch (error) {
        return { ok: false, reason: 'environment_services_failed', message: (error as Error).message };
      }
      if (isolation !== 'container' && isolation !== 'kubernetes')
        return invalid(`services need the container or Kubernetes backend; this worker runs agents with ${isolation}`);
      const refusal = imageRefusal(isolation, image, deps.sandbox);
      if (refusal) return invalid(refusal);
      const { container } = deps.sandbox;
      for (const service of services)
        if (service.image !== container.image && agentImageRefusal(service.image, container))
          return invalid(
            `service ${service.name}: image "${service.image}" is not one of the images the operator allows ` +
              '(SVC_AGENT_IMAGES)',
          );
      if (isolation === 'kubernetes') {
        // The pod's harness waits for a port; a command check would run in a container it cannot enter.
        const commanded = services.find((service) => service.readiness && 'command' in service.readiness);
        if (commanded)
          return invalid(`service ${commanded.name}: a readiness command is not supported on Kubernetes (use tcp)`);
        // Containers of the run's pod: they start with it, and the harness waits for them.
        return { ok: true };
      }
      const limitMiB = memoryLimitMiB ?? deps.sandbox.memoryLimitMiB;
      // The agent's own cgroup (agent-activities.ts makes the same): the services count in the run's limit.
      const memory = limitMiB ? createMemoryCgroup(runId, limitMiB) : null;
      try {
        await startServices(
          {
            engine,
            runId,
            image: image || container.image,
            hostId: sandboxHostId(runId, deps.sandbox),
            maxProcesses: deps.sandbox.maxProcesses,
            cpuMillicores: sandboxCpuLimit(cpuMillicores, deps.sandbox),
            memoryLimitMiB: limitMiB,
            memoryCgroup: memory?.enforced ? memory.cgroup : null,
            runtime: container.runtime,
            dir: join(dataPaths.sandboxes(deps.dataDir), runId),
          },
          services,
        );
      } catch (error) {
        return { ok: false, reason: 'environment_services_failed', message: (error as Error).message };
      }
      return { ok: true };
    },

    /**
     * Waits until every service is ready (an `environment.service_ready` event each), or one has
     * stopped or is still not ready at its bound: that one's name, why, and its last lines.
     */
    async awaitEnvironmentServices({
      runId,
      services,
      since,
    }: {
      runId: string;
      services: ServicePlan[];
      /** When the run began to wait (ms): a bound counts from the later of it and the service's start. */
      since: number;
    }) {
      if (inPod()) return { ok: true } satisfies ServicesReady;
      const context = Context.current();
      const waiting = new Map(services.map((service) => [service.name, service]));
      const failed = async (service: ServicePlan, why: string): Promise<ServicesReady> => ({
        ok: false,
        service: service.name,
        message: `service ${service.name} ${why}`,
        logs: await serviceLogTail(engine, runId, service.name),
      });
      for (;;) {
        for (const service of [...waiting.values()]) {
          const state = await probeService(engine, runId, service);
          if (state?.ready) {
            waiting.delete(service.name);
            const durationMs = Math.max(0, Date.now() - Date.parse(state.startedAt));
            await appendRunEvents(deps.readModel.em(), runId, [
              {
                dedupeKey: `environment:service_ready:${service.name}`,
                kind: 'environment.service_ready',
                stream: 'system',
                ts: new Date().toISOString(),
                payload: { name: service.name, durationMs },
              },
            ]);
          } else if (state) {
            return failed(service, state.exited === null ? 'is gone' : `exited with ${state.exited}`);
          } else {
            const startedAt = Math.max(since, (await serviceStartedAt(engine, runId, service.name)) ?? since);
            if (Date.now() - startedAt > service.readyTimeoutMs)
              return failed(service, `was not ready within ${service.readyTimeoutMs / 1000} s`);
          }
        }
        if (waiting.size === 0) return { ok: true } satisfies ServicesReady;
        heartbeat();
        await new Promise((resolve) => setTimeout(resolve, PROBE_EVERY_MS));
        if (context.cancellationSignal.aborted) await context.cancelled;
      }
    },

    /** Removes the run's services and their holder: the run has ended, however it ended. */
    async removeEnvironmentServices({ runId, names }: { runId: string; names: string[] }): Promise<void> {
      if (inPod()) return;
      await removeServices(engine, runId, names);
    },
  };
}
