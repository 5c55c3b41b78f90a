// svc's Prometheus metrics (prom-client), one registry per process: an API process and a worker
// each expose what they observe (docs/operations.md, "Metrics"). Histograms are in seconds.
// Gauges that are facts of the read model (runs per state, spend) are collected at scrape time.
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The process's registry: default Node.js metrics plus every svc_* metric below. */
export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry });

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** From seconds to weeks: a run's phases (queue, sandbox, PR review) span all of that. */
const LIFETIME_BUCKETS = [0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600, 4 * 3600, 24 * 3600, 7 * 24 * 3600];

const histogram = (name: string, help: string, buckets: number[], labelNames: string[] = []) =>
  new Histogram({ name, help, buckets, labelNames, registers: [metricsRegistry] });

/** Every svc_* metric a process observes as things happen (not the scrape-time gauges). */
export const svcMetrics = {
  httpRequestSeconds: histogram(
    'svc_http_request_seconds',
    'API request latency by route template and status',
    LATENCY_BUCKETS,
    ['method', 'route', 'status'],
  ),
  dispatchSeconds: histogram(
    'svc_dispatch_seconds',
    'POST /runs and POST /plan-runs: request in to accepted (workflow started) out',
    LATENCY_BUCKETS,
    ['kind'],
  ),
  queueWaitSeconds: histogram(
    'svc_run_queue_wait_seconds',
    'A run from dispatch to its agent started in its sandbox',
    LIFETIME_BUCKETS,
  ),
  sandboxReadySeconds: histogram(
    'svc_sandbox_ready_seconds',
    "A run's sandbox from launch to its agent spawned in it (isolation, network, supervisor)",
    LATENCY_BUCKETS,
  ),
  firstOutputSeconds: histogram(
    'svc_agent_first_output_seconds',
    "A run's agent from spawned to its first line of output",
    LIFETIME_BUCKETS,
  ),
  finalizeSeconds: histogram(
    'svc_run_finalize_seconds',
    "A run's finalize from the intent parked to the result (the sandbox's part, then svc's push)",
    LIFETIME_BUCKETS,
  ),
  runDurationSeconds: histogram(
    'svc_run_duration_seconds',
    'A run from its start to its terminal state, by that state',
    LIFETIME_BUCKETS,
    ['state'],
  ),
  timeToPrSeconds: histogram('svc_run_time_to_pr_seconds', 'A run from dispatch to its PR opened', LIFETIME_BUCKETS),
  prMergeSeconds: histogram(
    'svc_pr_open_to_merge_seconds',
    "A run's PR from the run's end (when the PR opens) to its merge",
    LIFETIME_BUCKETS,
  ),
  runFailures: new Counter({
    name: 'svc_run_failures_total',
    help: 'Runs that ended failed, by failure reason',
    labelNames: ['reason'],
    registers: [metricsRegistry],
  }),
  apiFailures: new Counter({
    name: 'svc_api_errors_total',
    help: 'API answers with the error envelope, by error code',
    labelNames: ['code'],
    registers: [metricsRegistry],
  }),
  retentionRemoved: new Counter({
    name: 'svc_retention_removed_total',
    help: 'What retention passes removed, by kind (workspaces, sandboxes, salvage, run_events, lifecycle_events)',
    labelNames: ['kind'],
    registers: [metricsRegistry],
  }),
  retentionReclaimedBytes: new Counter({
    name: 'svc_retention_reclaimed_bytes_total',
    help: "Bytes retention passes gave back on the data directory's disk, by kind",
    labelNames: ['kind'],
    registers: [metricsRegistry],
  }),
  outputLinesDropped: new Counter({
    name: 'svc_run_output_dropped_lines_total',
    help: "Agents' output lines not kept because their run's output reached SVC_RUN_OUTPUT_MAX_MIB",
    registers: [metricsRegistry],
  }),
  eventStreamRefusals: new Counter({
    name: 'svc_event_stream_refusals_total',
    help: 'Event streams refused because the process holds its maximum (event_stream_capacity)',
    registers: [metricsRegistry],
  }),
};

/** Seconds between two instants (ISO strings or epoch ms), or null when either is unknown or they are out of order. */
export function secondsBetween(from: string | number | null, to: string | number | null): number | null {
  if (from === null || to === null) return null;
  const ms = new Date(to).getTime() - new Date(from).getTime();
  return Number.isFinite(ms) && ms >= 0 ? ms / 1000 : null;
}
