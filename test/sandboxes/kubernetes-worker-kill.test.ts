// Kill -9 the worker while an agent runs in its pod: the pod and its supervisor (with the run's
// gateway) carry on, and a new worker finishes the run exactly once. Kill -9 the supervisor
// instead: the pod carries on, and a new supervisor takes it over, listening where the pod was
// told its gateway is, so the pod hands its workspace back to it.
import test from 'ava';
import { join } from 'node:path';
import { readJsonIfExists, sandboxFiles } from '../../sandbox/host/files.ts';
import { startKubeCluster } from '../support/kube-node.ts';
import { startTestStack, waitForRunState } from '../support/stack.ts';
import { assertRanExactlyOnce, startTickingRun } from '../support/ticking-run.ts';
import { killWorkerMidRun } from '../support/worker-kill.ts';
import type { SupervisorRecord } from '../../sandbox/spec.ts';

const podOf = (runId: string) => `svc-${runId.replace('_', '-')}`;

test.serial('a run in a pod survives SIGKILL of its worker and completes exactly once', async (t) => {
  const { kube, env } = await startKubeCluster(t);
  const { stack, runId, marker, firstWorker, finished } = await killWorkerMidRun(t, env, async (runId) => {
    t.is(kube.pods.get(podOf(runId))?.pod.status?.phase, 'Running', 'the pod runs on without a worker');
  });
  t.regex(firstWorker.output(), /sandbox: Kubernetes pods in namespace svc-runs/);
  t.regex(firstWorker.output(), /worker: polling task queue "[^"]+" \(agents in Kubernetes pods\)/);
  t.is(finished.state, 'succeeded', JSON.stringify(finished));
  t.is(finished.sandboxRunId, `pod:svc-runs/${podOf(runId)}`);
  await assertRanExactlyOnce(t, stack.readModel, runId, marker);
  t.is(kube.created.filter((pod) => pod.metadata!.name === podOf(runId)).length, 1, 'one pod for the agent');
});

test.serial(
  'a pod whose supervisor is SIGKILLed is taken over: every line once, one agent, its work back',
  async (t) => {
    const { kube, env } = await startKubeCluster(t);
    const svc = await startTestStack({ env });
    t.teardown(() => svc.stop());
    const { runId, marker } = await startTickingRun(svc, svc.stack.readModel);
    const files = sandboxFiles(join(svc.config.dataDir, 'sandboxes', runId));
    const first = readJsonIfExists<SupervisorRecord>(files.supervisor)!;
    const port = readJsonIfExists<{ port: number }>(files.gateway)!.port;
    process.kill(first.pid, 'SIGKILL');
    const finished = await waitForRunState(svc, runId, undefined, 90_000);
    t.is(finished.state, 'succeeded', JSON.stringify(finished));
    t.not(readJsonIfExists<SupervisorRecord>(files.supervisor)!.pid, first.pid, 'a new supervisor took over');
    t.like(readJsonIfExists(files.gateway), { port, handedBack: ['workspace', 'home'] }, 'on the same port');
    await assertRanExactlyOnce(t, svc.stack.readModel, runId, marker);
    t.is(kube.created.filter((pod) => pod.metadata!.name === podOf(runId)).length, 1, 'one pod for the agent');
  },
);
