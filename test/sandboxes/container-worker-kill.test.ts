// Kill -9 the worker while an agent runs in its container: the container and its supervisor carry
// on, and a new worker finishes the run exactly once (one container, every line once). Kill -9 the
// supervisor instead: the container carries on, and a new supervisor takes it over.
import test from 'ava';
import { join } from 'node:path';
import { readJsonIfExists, sandboxFiles } from '../../sandbox/host/files.ts';
import { startContainerEngine } from '../support/container-engine.ts';
import { startTestStack, waitForRunState } from '../support/stack.ts';
import { assertRanExactlyOnce, startTickingRun } from '../support/ticking-run.ts';
import { killWorkerMidRun } from '../support/worker-kill.ts';
import type { SupervisorRecord } from '../../sandbox/spec.ts';

test('a run in a container survives SIGKILL of its worker and completes exactly once', async (t) => {
  const engine = await startContainerEngine();
  t.teardown(() => engine.stop());
  const { stack, runId, marker, firstWorker, finished } = await killWorkerMidRun(t, engine.env, async (runId) => {
    t.true((await engine.engine.inspect(`svc-${runId}`))?.State.Running, 'the container runs on without a worker');
  });
  t.regex(firstWorker.output(), /sandbox: containers \(localhost\/svc-agent:latest\)/);
  t.regex(firstWorker.output(), /worker: polling task queue "[^"]+" \(agents in containers\)/);
  t.is(finished.state, 'succeeded');
  t.regex(finished.sandboxRunId, /^container:/);
  await assertRanExactlyOnce(t, stack.readModel, runId, marker);
});

test('a container whose supervisor is SIGKILLed is taken over: every line once, one agent, success', async (t) => {
  const engine = await startContainerEngine();
  t.teardown(() => engine.stop());
  const svc = await startTestStack({ env: engine.env });
  t.teardown(() => svc.stop());
  const { runId, marker } = await startTickingRun(svc, svc.stack.readModel);
  const files = sandboxFiles(join(svc.config.dataDir, 'sandboxes', runId));
  const first = readJsonIfExists<SupervisorRecord>(files.supervisor)!;
  process.kill(first.pid, 'SIGKILL');
  const finished = await waitForRunState(svc, runId, undefined, 90_000);
  t.is(finished.state, 'succeeded', JSON.stringify(finished));
  t.not(readJsonIfExists<SupervisorRecord>(files.supervisor)!.pid, first.pid, 'a new supervisor took over');
  await assertRanExactlyOnce(t, svc.stack.readModel, runId, marker);
});
