// What an operator (or, redacted, a spectator) sees of the instance as a whole: who it is
// (GET /instance), how it is doing (GET /ops/overview) and its Prometheus text (GET /metrics).
import { Gauge, Registry } from 'prom-client';
import { isTerminalRunState, RUN_STATES } from '../../core/run-states.ts';
import type { OpsRepository, OpsScope } from '../../db/repositories/ops.repository.ts';
import { metricsRegistry } from '../../platform/metrics.ts';
import type { AdmissionLimits } from './admission.ts';

export const OPS_WINDOWS = { '24h': 24 * 3600_000, '7d': 7 * 24 * 3600_000, '30d': 30 * 24 * 3600_000 } as const;
export type OpsWindow = keyof typeof OPS_WINDOWS;

export interface InstanceFacts {
  version: string;
  name: string;
  publicUrl: string | null;
  /** The sandbox backend agents run in. */
  runtime: string;
  authMode: 'token' | 'public';
  dbBackend: 'sqlite' | 'postgresql';
  startedAt: number;
  /** The instance's admission caps (null: only projects' own). */
  admission: AdmissionLimits;
}

export interface OpsServiceDeps {
  instance: InstanceFacts;
  ops: OpsRepository;
  /** Readiness of the database and Temporal (the same checks as GET /readyz). */
  readiness(): Promise<{ name: string; ok: boolean }[]>;
  /** Streams this process holds: lifecycle subscribers and run event streams. */
  liveStreams(): { lifecycle: number; runEvents: number };
  /** Extra Prometheus text appended to GET /metrics (the in-process worker's Temporal SDK metrics). */
  extraMetrics?: () => Promise<string>;
}

export class OpsService {
  readonly #deps: OpsServiceDeps;
  /** This API's scrape-time gauges; merged with the process's registry on every scrape. */
  readonly #gauges = new Registry();

  constructor(deps: OpsServiceDeps) {
    this.#deps = deps;
    registerReadModelGauges(deps, this.#gauges);
  }

  instance() {
    const { startedAt, ...facts } = this.#deps.instance;
    return { ...facts, uptimeSeconds: Math.floor((Date.now() - startedAt) / 1000) };
  }

  /** The window's runs, spend and delivery, every non-terminal run, and the services' health. */
  async overview(window: OpsWindow, onlyProjects?: Set<string>) {
    const now = Date.now();
    const scope: OpsScope = { since: now - OPS_WINDOWS[window], onlyProjects };
    const [byState, everyState, totals, checks, passes] = await Promise.all([
      this.#deps.ops.runsByState(scope),
      this.#deps.ops.runsByState({ onlyProjects }),
      this.#deps.ops.totals(scope),
      this.#deps.readiness(),
      // Where the worker hosts are and what they hold is the operator's to see.
      onlyProjects ? [] : this.#deps.ops.lastRetentionPasses(),
    ]);
    const nonTerminal = RUN_STATES.filter((state) => !isTerminalRunState(state)).reduce(
      (sum, state) => sum + everyState[state],
      0,
    );
    const streams = this.#deps.liveStreams();
    return {
      window,
      generatedAt: new Date(now).toISOString(),
      runs: { byState, total: totals.runs, nonTerminal },
      spend: { windowRuns: totals.runs, priced: totals.priced, costUsd: totals.costUsd },
      delivery: { branchesPushed: totals.branchesPushed, prsOpened: totals.prsOpened, prsMerged: totals.prsMerged },
      services: {
        runtime: this.#deps.instance.runtime,
        dbBackend: this.#deps.instance.dbBackend,
        dbReachable: checks.find((check) => check.name === 'db_reachable')?.ok ?? false,
        temporalReachable: checks.find((check) => check.name === 'temporal_reachable')?.ok ?? false,
        lifecycleStreams: streams.lifecycle,
        runEventStreams: streams.runEvents,
      },
      retention: passes.map((pass) => ({
        host: pass.host,
        finishedAt: pass.finishedAt.toISOString(),
        removed: pass.removed,
        reclaimedBytes: pass.reclaimedBytes,
      })),
    };
  }

  /** The Prometheus text of this process. */
  async metrics(): Promise<{ contentType: string; text: string }> {
    const extra = (await this.#deps.extraMetrics?.().catch(() => '')) ?? '';
    const merged = Registry.merge([metricsRegistry, this.#gauges]);
    return { contentType: metricsRegistry.contentType, text: (await merged.metrics()) + extra };
  }
}

/** The read model's facts (and this API's streams) as gauges, read at scrape time. */
function registerReadModelGauges(deps: OpsServiceDeps, registry: Registry): void {
  new Gauge({
    name: 'svc_runs',
    help: 'Runs in the read model, by state',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const counts = await deps.ops.runsByState({});
      for (const state of RUN_STATES) this.set({ state }, counts[state]);
    },
  });
  const totals = () => deps.ops.totals({});
  const gauge = (name: string, help: string, read: (t: Awaited<ReturnType<typeof totals>>) => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        this.set(read(await totals()));
      },
    });
  gauge('svc_cost_usd', 'Spend of every priced run, in USD', (t) => t.costUsd);
  gauge('svc_tokens_input', 'Input tokens of every run', (t) => t.tokensInput);
  gauge('svc_tokens_output', 'Output tokens of every run', (t) => t.tokensOutput);
  new Gauge({
    name: 'svc_live_streams',
    help: 'Event streams this API process holds open, by kind',
    labelNames: ['kind'],
    registers: [registry],
    collect() {
      const streams = deps.liveStreams();
      this.set({ kind: 'lifecycle' }, streams.lifecycle);
      this.set({ kind: 'run_events' }, streams.runEvents);
    },
  });
}
