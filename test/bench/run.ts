// Benchmarks, each a ratio against a baseline measured in the same run on the same machine (or,
// for run overhead, an absolute bound), so the numbers mean something on any hardware. A figure
// over its target fails the bench.
//   npm run bench
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScratchPostgresDatabase } from '../../db/scratch-postgres.ts';
import { measureRunAnalytics } from './analytics.ts';
import { measureConcurrentAgents } from './concurrent-agents.ts';
import { measureDispatch } from './dispatch.ts';
import { measureEnvironmentStartup } from './environments.ts';
import { measureEventStreams } from './event-streams.ts';
import { measureEventIngest, measureOutputIngest } from './ingest.ts';
import { measureIngestInterference } from './ingest-interference.ts';
import { type Record } from './measure.ts';
import { measurePlanOverhead } from './plan-overhead.ts';
import { measurePublicReads } from './public-reads.ts';
import { printReport, type Figure } from './report.ts';
import { measureRunsList } from './runs-list.ts';
import { measureSandboxStartup } from './sandboxes.ts';
import { measureSteering } from './steering.ts';
import { dashboardBundleKb, measureDashboardFirstLoad } from './web.ts';

const results: Figure[] = [];
const record: Record = (name, value, target, direction, detail) =>
  results.push({
    name,
    value: Number(value.toFixed(3)),
    target: `${direction === 'max' ? '<=' : '>='} ${target}`,
    ok: direction === 'max' ? value <= target : value >= target,
    detail,
  });

// `npm run bench -- dispatch` (or ingest, plan, analytics, list, agents, streams, public, steering, web, sandbox,
// environments)
// runs one part only.
const POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';
const only = process.argv[2];
if (!only || only === 'ingest') {
  const { ratio, ...detail } = await measureEventIngest();
  // Writing events as plain statements in the projection's transaction holds the ratio at 1.5–3.2.
  record('event-ingest ratio (appendRunEvents / insertMany)', ratio, 4, 'max', detail);
  const output = await measureOutputIngest();
  // Chunk rows (docs/decisions/0047-compact-output-storage.md): a line costs about its own bytes.
  record('output ingest: read-model bytes per output byte, seq 1 1000000', output.bytesPerOutputByte, 2, 'max', {
    ...output,
  });
  record('output ingest: 1,000,000 lines ÷ a bare insert of a row per line', output.timeRatio, 1, 'max', { ...output });
  const neighbours = await measureIngestInterference();
  // Other runs' dispatch and the API's reads while a million lines are stored: at most twice as slow.
  record("output ingest: neighbours' POST /runs p50 while ingesting ÷ quiet", neighbours.dispatchP50Ratio, 2, 'max', {
    ...neighbours,
  });
  record('output ingest: GET /runs/{id} p99 while ingesting ÷ quiet', neighbours.readP99Ratio, 2, 'max', {
    ...neighbours,
  });
}
if (!only || only === 'dispatch') await measureDispatch(record);
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
  // An absolute bound: the analytics page must stay interactive at scale.
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
if (!only || only === 'list') {
  // GET /runs at scale: the route's page within twice its raw query, and ≤ 10 ms.
  const sqlite = await measureRunsList(join(mkdtempSync(join(tmpdir(), 'svc-bench-')), 'list.sqlite'));
  record('GET /runs over 100k runs, sqlite, worst page (ms, p50)', sqlite.p50Ms, 10, 'max', { ...sqlite });
  record('GET /runs over 100k runs, sqlite, worst ÷ its raw page query', sqlite.ratio, 2, 'max', {});
  const postgres = await createScratchPostgresDatabase(process.env.SVC_BENCH_POSTGRES_URL ?? POSTGRES_URL);
  try {
    const timing = await measureRunsList(postgres.url);
    record('GET /runs over 100k runs, postgresql, worst page (ms, p50)', timing.p50Ms, 10, 'max', { ...timing });
    record('GET /runs over 100k runs, postgresql, worst ÷ its raw page query', timing.ratio, 2, 'max', {});
  } finally {
    await postgres.drop();
  }
}
if (!only || only === 'agents') {
  // 100 agents at once: svc's own processes' memory, the supervisors' included.
  const memory = await measureConcurrentAgents();
  // RSS counts shared pages in every process; PSS splits them: what the machine really spends.
  record('100 running agents: API + worker + supervisors (RSS, MiB)', memory.totalRssMiB, 2048, 'max', { ...memory });
  record('100 running agents: API + worker + supervisors (PSS, MiB)', memory.totalPssMiB, 2048, 'max', {});
}
if (!only || only === 'streams') {
  // 1,000 held lifecycle streams: every line at every client within 100 ms p99.
  const streams = await measureEventStreams();
  record('1,000 /events/stream clients: transition → line at a client (ms, p99)', streams.p99Ms, 100, 'max', {
    ...streams,
  });
  record('1,000 /events/stream clients: deliveries missing', streams.missing, 0, 'max', {});
  record('1,000 /events/stream clients: API RSS with them held (MiB)', streams.apiRssHeldMiB, 150, 'max', {});
}
if (!only || only === 'public') {
  // Public mode: 20 spectators reading a 58 MB run's events page after page; liveness stays prompt.
  const reads = await measurePublicReads();
  record('20 spectators reading a 58 MB run: GET /healthz meanwhile (ms, p99)', reads.healthzP99Ms, 50, 'max', {
    ...reads,
  });
}
if (!only || only === 'steering') {
  // The relay's own bound (sandbox/inside/steering-relay.ts): a message reaches the agent within a second.
  const steering = await measureSteering();
  record('steering: POST /runs/{id}/steer → the agent has it (ms, p50)', steering.p50Ms, 1000, 'max', {
    ...steering,
  });
  record('steering: POST /runs/{id}/steer → the agent has it (ms, p99)', steering.p99Ms, 1000, 'max', {});
}
if (!only || only === 'web') {
  // Absolute bounds: the dashboard's runs page loads in under a second at 10k runs,
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
if (!only || only === 'environments') {
  // A kept environment mounted copy-on-write: a cached run starts about as fast as one without a setup.
  const startup = await measureEnvironmentStartup();
  record('environments: dispatch → first output, warm − no setup (ms, p50)', startup.warmMinusNoSetupMs, 1000, 'max', {
    ...startup,
  });
}
const failed = printReport(results);
process.exit(failed ? 1 : 0);
