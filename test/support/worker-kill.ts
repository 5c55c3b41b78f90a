// The worker-kill scenario the durability tests share: an API-only stack, a standalone `svc worker`
// that is SIGKILLed while a ticking run's agent prints, and a second worker that must finish it.
import type { ExecutionContext } from 'ava';
import { loadConfig } from '../../platform/config.ts';
import { startStack, type RunningStack } from '../../stack/stack.ts';
import { spawnSvc, waitForOutput, type ChildHandle } from './processes.ts';
import { request, testEnvironment, waitForRunState, type TestResponse } from './stack.ts';
import { startTickingRun } from './ticking-run.ts';

export interface WorkerKillOutcome {
  stack: RunningStack;
  api: { request(method: string, path: string, options?: any): Promise<TestResponse> };
  runId: string;
  marker: string;
  firstWorker: ChildHandle;
  finished: any;
}

/** The production topology's API half in this process (no worker): workers are `svc worker` processes. */
export async function startApiOnlyStack(t: ExecutionContext, env: Record<string, string> = {}) {
  const environment = await testEnvironment({ env });
  const stack = await startStack({
    config: loadConfig(environment.env),
    api: true,
    worker: false,
    noAuth: false,
    log: () => {},
  });
  t.teardown(() => stack.stop());
  const api: WorkerKillOutcome['api'] = {
    request: (method, path, options) => request(stack.api!.url, stack.token.token, method, path, options),
  };
  return { environment, stack, api };
}

/** Runs the scenario; `whileDown` looks at the world between the kill and the second worker. */
export async function killWorkerMidRun(
  t: ExecutionContext,
  env: Record<string, string> = {},
  whileDown: (runId: string, api: WorkerKillOutcome['api']) => Promise<void> = async () => {},
): Promise<WorkerKillOutcome> {
  const { environment, stack, api } = await startApiOnlyStack(t, env);

  const firstWorker = spawnSvc(['worker'], environment.env);
  t.teardown(() => firstWorker.child.kill('SIGKILL'));
  await waitForOutput(firstWorker, /worker: polling/);

  const { runId, marker } = await startTickingRun(api, stack.readModel);
  firstWorker.child.kill('SIGKILL');
  await firstWorker.exited;
  await whileDown(runId, api);

  const secondWorker = spawnSvc(['worker'], environment.env);
  t.teardown(async () => {
    secondWorker.child.kill('SIGTERM');
    await secondWorker.exited;
  });
  const finished = await waitForRunState(api, runId, undefined, 90_000);
  return { stack, api, runId, marker, firstWorker, finished };
}

/** SIGKILLs a `svc worker` and starts another in its place (stopped at the test's end). */
export async function replaceWorker(
  t: ExecutionContext,
  worker: ChildHandle,
  env: NodeJS.ProcessEnv,
): Promise<ChildHandle> {
  worker.child.kill('SIGKILL');
  await worker.exited;
  const next = spawnSvc(['worker'], env);
  t.teardown(async () => {
    next.child.kill('SIGTERM');
    await next.exited;
  });
  return next;
}
