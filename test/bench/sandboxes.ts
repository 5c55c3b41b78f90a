// Per sandbox backend: dispatch → sandbox started, and dispatch → first agent output (p50 over a
// few trivial runs), measured from the server's own timestamps (the run's createdAt, the events'
// ts), one backend after the other on the same Temporal.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTemporalDevSettings, startTemporalDev } from '../../stack/temporal-dev.ts';
import { startContainerEngine } from '../support/container-engine.ts';
import { kubernetesEnv } from '../support/kube-node.ts';
import { KubeStandIn } from '../support/kube-stand-in.ts';
import { freePort } from '../support/free-port.ts';
import { runEvents, startTestStack, waitForRunState, type TestStack } from '../support/stack.ts';

export interface SandboxStartup {
  backend: 'bubblewrap' | 'container' | 'kubernetes';
  runs: number;
  sandboxStartedMsP50: number;
  firstOutputMsP50: number;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function measure(svc: TestStack, runs: number): Promise<{ started: number[]; output: number[] }> {
  const started: number[] = [];
  const output: number[] = [];
  for (let i = 0; i < runs; i++) {
    const dispatched = await svc.request('POST', '/runs', { body: { agent: 'shell', prompt: 'echo first' } });
    const runId = dispatched.body.run.id as string;
    const createdAt = dispatched.body.run.createdAt as number;
    await waitForRunState(svc, runId);
    const events = await runEvents(svc, runId);
    const at = (event: { ts: string } | undefined) => (event ? Date.parse(event.ts) - createdAt : NaN);
    started.push(at(events.find((event) => event.kind === 'sandbox.started')));
    output.push(at(events.find((event) => event.stream === 'stdout')));
  }
  return { started, output };
}

/**
 * On a Temporal dev server of its own, the backends one after the other (Kubernetes: the stand-in
 * API, so pods start on this machine's Podman without a scheduler or an image pull).
 */
export async function measureSandboxStartup(runs = 8): Promise<SandboxStartup[]> {
  const settings = loadTemporalDevSettings();
  settings.port = await freePort();
  settings.ui.enabled = false;
  const temporal = await startTemporalDev(mkdtempSync(join(tmpdir(), 'svc-bench-s-')), settings);
  const temporalAddress = temporal.address;
  const results: SandboxStartup[] = [];
  const engine = await startContainerEngine();
  const kube = new KubeStandIn({ engine: engine.address });
  await kube.start();
  const backendEnv = {
    bubblewrap: {},
    container: engine.env,
    kubernetes: kubernetesEnv(kube),
  };
  try {
    for (const backend of ['bubblewrap', 'container', 'kubernetes'] as const) {
      const svc = await startTestStack({ temporalAddress, env: { SVC_LOG_LEVEL: 'ERROR', ...backendEnv[backend] } });
      try {
        await measure(svc, 1); // warm-up: first bundle load, first container of the image
        const { started, output } = await measure(svc, runs);
        results.push({
          backend,
          runs,
          sandboxStartedMsP50: Math.round(median(started)),
          firstOutputMsP50: Math.round(median(output)),
        });
      } finally {
        await svc.stop();
      }
    }
  } finally {
    await kube.stop();
    await engine.stop();
    await temporal.stop();
  }
  return results;
}
