// Benchmarks, each a ratio against a baseline measured in the same run on the same machine (or,
// for run overhead, an absolute bound), so the numbers mean something on any hardware. A figure
// over its target fails the bench.
//   npm run bench
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { BUILTIN_AGENTS } from '../../core/agents.ts';
import { newId } from '../../core/ids.ts';
import { buildRunInput } from '../../core/run-input.ts';
import { runSearchAttributes } from '../../core/search-attributes.ts';
import { dataPaths } from '../../platform/config.ts';
import { loadTemporalDevSettings, startTemporalDev } from '../../stack/temporal-dev.ts';
import { freePort } from '../support/free-port.ts';
import { measurePlanOverhead } from './plan-overhead.ts';
import { measureRunAnalytics } from './analytics.ts';
import { dashboardBundleKb, measureDashboardFirstLoad } from './web.ts';
import { measureSandboxStartup } from './sandboxes.ts';
import { measureEventIngest } from './ingest.ts';
import { createScratchPostgresDatabase } from '../../db/scratch-postgres.ts';
import { spawnSvc, waitForOutput } from '../support/processes.ts';
import { request, testEnvironment, waitForRunState } from '../support/stack.ts';

interface Figure {
  name: string;
  value: number;
  target: string;
  ok: boolean;
  detail: Record<string, number | string>;
}

const results: Figure[] = [];
const record = (
  name: string,
  value: number,
  target: number,
  direction: 'max' | 'min',
  detail: Record<string, number | string>,
) =>
  results.push({
    name,
    value: Number(value.toFixed(3)),
    target: `${direction === 'max' ? '<=' : '>='} ${target}`,
    ok: direction === 'max' ? value <= target : value >= target,
    detail,
  });

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}

/**
 * Dispatch: POST /runs against a bare client.workflow.start of the same workflow, on one Temporal
 * server, in the production topology: an API process (`svc serve --no-worker`) and a worker
 * process (`svc worker`), both real `svc` processes. Dispatch latency and rate are measured while
 * no worker runs (the runs queue in Temporal), so that on a small machine the agents' processes do
 * not compete with what is measured; the worker then drains the queue, and run overhead is
 * measured with it running.
 */
async function dispatch(): Promise<void> {
  const settings = loadTemporalDevSettings();
  settings.port = await freePort();
  settings.ui.enabled = false;
  const temporal = await startTemporalDev(mkdtempSync(join(tmpdir(), 'svc-bench-t-')), settings);
  const environment = await testEnvironment({
    temporalAddress: temporal.address,
    env: { SVC_API_TOKEN: 'bench-operator-token', SVC_LOG_LEVEL: 'ERROR' },
  });
  const server = spawnSvc(['serve', '--no-worker'], environment.env);
  let worker: ReturnType<typeof spawnSvc> | undefined;
  const connection = await Connection.connect({ address: temporal.address });
  try {
    const apiUrl = (await waitForOutput(server, /API: +(http:\/\/\S+)/, 60_000))[1]!;
    const api = {
      request: (method: string, path: string, options?: Parameters<typeof request>[4]) =>
        request(apiUrl, 'bench-operator-token', method, path, options),
    };
    const client = new Client({ connection });
    const taskQueue = environment.env.SVC_TASK_QUEUE!;
    const started: string[] = [];
    const bareStart = async () => {
      const input = buildRunInput(
        {
          runId: newId('run'),
          createdAt: Date.now(),
          agent: BUILTIN_AGENTS[0]!,
          projectId: null,
          prompt: 'true',
          trigger: 'bench',
        },
        dataPaths.workspaces(environment.dataDir),
      );
      await client.workflow.start('runWorkflow', {
        workflowId: input.runId,
        taskQueue,
        args: [input],
        typedSearchAttributes: runSearchAttributes(input),
      });
      started.push(input.runId);
    };
    const apiStart = async () => {
      const response = await api.request('POST', '/runs', {
        body: { agent: 'shell', prompt: 'true', trigger: 'bench' },
      });
      if (response.status !== 201) throw new Error(`dispatch failed: ${response.status} ${response.text}`);
      started.push(response.body.run.id);
    };
    const drain = async () => {
      for (const id of started.splice(0)) await waitForRunState(api, id, undefined, 120_000);
    };
    for (let i = 0; i < 5; i++) {
      await bareStart();
      await apiStart();
    }

    // Latency: alternate the two so both see the same machine load.
    const bare: number[] = [];
    const viaApi: number[] = [];
    for (let i = 0; i < 60; i++) {
      bare.push(await timed(bareStart));
      viaApi.push(await timed(apiStart));
    }
    // The HTTP hop alone, to the same API process: how much of the difference is transport.
    const hop: number[] = [];
    for (let i = 0; i < 60; i++) hop.push(await timed(() => api.request('GET', '/healthz')));
    record(
      'dispatch p50 ratio (POST /runs / workflow.start)',
      percentile(viaApi, 50) / percentile(bare, 50),
      1.3,
      'max',
      {
        httpHopP50Ms: Number(percentile(hop, 50).toFixed(2)),
        apiP50Ms: Number(percentile(viaApi, 50).toFixed(2)),
        apiP99Ms: Number(percentile(viaApi, 99).toFixed(2)),
        bareP50Ms: Number(percentile(bare, 50).toFixed(2)),
        bareP99Ms: Number(percentile(bare, 99).toFixed(2)),
      },
    );

    // Sustained rate: 8 concurrent dispatchers for 3 s each.
    const rate = async (start: () => Promise<void>) => {
      let count = 0;
      const until = performance.now() + 3000;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (performance.now() < until) {
            await start();
            count += 1;
          }
        }),
      );
      return count / 3;
    };
    const bareRate = await rate(bareStart);
    const apiRate = await rate(apiStart);
    record('sustained dispatch rate ratio (POST /runs / workflow.start)', apiRate / bareRate, 0.8, 'min', {
      apiPerSecond: Number(apiRate.toFixed(1)),
      barePerSecond: Number(bareRate.toFixed(1)),
    });

    // Now a worker drains everything queued above: every dispatched run must complete.
    const queued = started.length;
    worker = spawnSvc(['worker'], environment.env);
    await waitForOutput(worker, /worker: polling/, 60_000);
    const drainMs = await timed(drain);

    // Overhead: dispatch to terminal for an agent that does nothing.
    const overhead: number[] = [];
    for (let i = 0; i < 5; i++) {
      overhead.push(
        await timed(async () => {
          const response = await api.request('POST', '/runs', { body: { agent: 'shell', prompt: 'true' } });
          await waitForRunState(api, response.body.run.id, undefined, 60_000);
        }),
      );
    }
    record('run overhead, trivial agent (ms, median)', percentile(overhead, 50), 1500, 'max', {
      maxMs: Math.round(Math.max(...overhead)),
    });
    record('API server RSS (MiB)', rssMiB(server.child.pid!), 512, 'max', {
      workerRssMiB: Math.round(rssMiB(worker.child.pid!)),
      drainedRuns: queued,
      drainSeconds: Math.round(drainMs / 1000),
    });
  } finally {
    await connection.close();
    for (const child of [server, worker]) {
      if (!child) continue;
      child.child.kill('SIGTERM');
      await child.exited;
    }
    await temporal.stop();
  }
}

// `npm run bench -- dispatch` (or ingest, plan, analytics, web, sandbox) runs one part only.
const POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';
const only = process.argv[2];
if (!only || only === 'ingest') {
  const { ratio, ...detail } = await measureEventIngest();
  record('event-ingest ratio (appendRunEvents / insertMany)', ratio, 6, 'max', detail);
}
if (!only || only === 'dispatch') await dispatch();
if (!only || only === 'plan') {
  const plan = await measurePlanOverhead();
  // An absolute bound, like run overhead: what the coordinator adds between two children.
  record(
    'plan-run coordinator overhead per child (ms, mean dispatch after merge)',
    plan.dispatchAfterMergeMsMean,
    3000,
    'max',
    { ...plan },
  );
}
if (!only || only === 'analytics') {
  // An absolute bound from the operations issue: the analytics page must stay interactive at scale.
  const sqlite = await measureRunAnalytics(join(mkdtempSync(join(tmpdir(), 'svc-bench-')), 'analytics.sqlite'));
  record('GET /analytics/runs over 100k runs, sqlite (ms, p50)', sqlite.p50Ms, 200, 'max', { ...sqlite });
  const postgres = await createScratchPostgresDatabase(process.env.SVC_BENCH_POSTGRES_URL ?? POSTGRES_URL);
  try {
    const timing = await measureRunAnalytics(postgres.url);
    record('GET /analytics/runs over 100k runs, postgresql (ms, p50)', timing.p50Ms, 200, 'max', { ...timing });
  } finally {
    await postgres.drop();
  }
}
if (!only || only === 'web') {
  // Absolute bounds from the dashboard issue: the runs page loads in under a second at 10k runs,
  // and the bundle stays small.
  const bundle = dashboardBundleKb();
  record('dashboard bundle, JS + CSS gzipped (kB)', bundle.totalKb, 100, 'max', bundle.files);
  const timing = await measureDashboardFirstLoad();
  record('dashboard first load of the runs page, 10k runs (ms, median)', timing.firstLoadMsMedian, 1000, 'max', {
    ...timing,
  });
}
if (!only || only === 'sandbox') {
  // Per backend, from the server's timestamps: a container adds an engine round trip and a start.
  for (const backend of await measureSandboxStartup()) {
    const { sandboxStartedMsP50: started, firstOutputMsP50: output } = backend;
    record(`dispatch → sandbox started, ${backend.backend} (ms, p50)`, started, 1500, 'max', { ...backend });
    record(`dispatch → first agent output, ${backend.backend} (ms, p50)`, output, 3000, 'max', { ...backend });
  }
}
for (const figure of results) console.log(JSON.stringify(figure));
const failed = results.filter((figure) => !figure.ok).length;
console.log(`${results.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
