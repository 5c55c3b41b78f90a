// The production topology the benches measure: one Temporal dev server, an API process
// (`svc serve --no-worker`) and, when asked, a worker process (`svc worker`), real `svc` processes
// sharing one data directory and task queue.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { detachMountsUnder } from '../../activities/environment-cache.ts';
import { loadTemporalDevSettings, startTemporalDev } from '../../stack/temporal-dev.ts';
import { freePort } from '../support/free-port.ts';
import { spawnSvc, waitForOutput, type ChildHandle } from '../support/processes.ts';
import { request, testEnvironment } from '../support/stack.ts';

const TOKEN = 'bench-operator-token';

export type BenchTopology = Awaited<ReturnType<typeof startBenchTopology>>;

/** `env`: settings for both processes on top of the bench's own (SVC_EVENT_STREAM_MAX, say). */
export async function startBenchTopology(env: Record<string, string> = {}) {
  const settings = loadTemporalDevSettings();
  settings.port = await freePort();
  settings.ui.enabled = false;
  const temporal = await startTemporalDev(mkdtempSync(join(tmpdir(), 'svc-bench-t-')), settings);
  const environment = await testEnvironment({
    temporalAddress: temporal.address,
    env: { SVC_API_TOKEN: TOKEN, SVC_LOG_LEVEL: 'ERROR', ...env },
  });
  const server = spawnSvc(['serve', '--no-worker'], environment.env);
  let worker: ChildHandle | undefined;
  const apiUrl = (await waitForOutput(server, /API: +(http:\/\/\S+)/, 60_000))[1]!;
  return {
    temporal,
    environment,
    server,
    apiUrl,
    token: TOKEN,
    api: {
      request: (method: string, path: string, options?: Parameters<typeof request>[4]) =>
        request(apiUrl, TOKEN, method, path, options),
    },
    get worker() {
      return worker;
    },
    /** Starts the worker process; answers once it polls. */
    async startWorker(): Promise<ChildHandle> {
      // The worker tells its sandboxes where the API is (their callback routes: inbox, results).
      worker = spawnSvc(['worker'], { ...environment.env, SVC_API_URL: apiUrl });
      await waitForOutput(worker, /worker: polling/, 60_000);
      return worker;
    },
    async stop(): Promise<void> {
      for (const child of [server, worker]) {
        if (!child) continue;
        child.child.kill('SIGTERM');
        await child.exited;
      }
      await temporal.stop();
      // Runs over a kept environment leave their workspace and home mounted.
      await detachMountsUnder(environment.dataDir);
    },
  };
}
