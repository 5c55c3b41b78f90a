// A forge stack whose agents run on a real container engine (Podman), directly or behind the
// Kubernetes stand-in: the set-up the container and pod tests of environments and services share.
import { startContainerEngine, type TestContainerEngine } from './container-engine.ts';
import { forgeStack } from './forge-stack.ts';
import { kubernetesEnv } from './kube-node.ts';
import { KubeStandIn } from './kube-stand-in.ts';
import { buildServiceImage } from './service-image.ts';
import type { TestStack } from './stack.ts';

export interface BackendForge {
  engine: TestContainerEngine;
  kube: KubeStandIn | null;
  fixture: ReturnType<typeof forgeStack>;
  svc: TestStack;
  stop(): Promise<void>;
}

/** Starts the engine (and the stand-in for `kubernetes`), builds the test service image, then the stack. */
export async function startBackendForge(
  backend: 'container' | 'kubernetes',
  env: Record<string, string> = {},
): Promise<BackendForge> {
  const engine = await startContainerEngine();
  buildServiceImage();
  const kube = backend === 'kubernetes' ? new KubeStandIn({ engine: engine.address }) : null;
  await kube?.start();
  const fixture = forgeStack({ ...(kube ? kubernetesEnv(kube) : engine.env), ...env });
  const svc = await fixture.start();
  return {
    engine,
    kube,
    fixture,
    svc,
    async stop() {
      await fixture.stop();
      await kube?.stop();
      await engine.stop();
    },
  };
}
