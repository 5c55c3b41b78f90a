// GET /analytics/runs over a large read model: 100k runs spread over the default 30-day window
// (agents, models, providers, projects, states, costs, PRs), answered by the service the route
// calls, on a given database. What it measures is the SQL (the route adds only JSON encoding).
import { AnalyticsRepository } from '../../db/repositories/analytics.repository.ts';
import { AnalyticsService } from '../../api/services/analytics.service.ts';
import { RunEntity, type Run } from '../../db/entities/index.ts';
import { initORM, migrate, type ReadModel } from '../../db/orm.ts';

const DAY = 86_400_000;
const STATES = ['succeeded', 'succeeded', 'succeeded', 'failed', 'cancelled'] as const;

export interface AnalyticsTiming {
  runs: number;
  p50Ms: number;
  p95Ms: number;
  seedSeconds: number;
}

/** The i-th of the bench's runs, created within the last 29 days (shared with the dashboard bench). */
export function benchRunRow(i: number, now: number) {
  const createdAt = now - Math.floor((i / 100_000) * 29 * DAY) - 1000;
  const state = STATES[i % STATES.length]!;
  const startedAt = createdAt + 5_000;
  const endedAt = startedAt + 60_000 + (i % 600) * 1000;
  const opened = state === 'succeeded' && i % 3 !== 0;
  return {
    id: `run_b${i.toString(36).padStart(10, '0')}`,
    agentName: `agent-${i % 7}`,
    model: `model-${i % 5}`,
    provider: i % 2 ? 'anthropic' : 'openai',
    projectId: `prj_${i % 40}`,
    state,
    failureReason: state === 'failed' ? (i % 2 ? 'crashed' : 'timed_out') : null,
    createdAt,
    startedAt: new Date(startedAt),
    endedAt: new Date(endedAt),
    costUsd: (i % 100) / 64,
    costBasis: 'api',
    tokensInput: 1000 + (i % 500),
    tokensOutput: 200 + (i % 50),
    tokensCacheRead: i % 300,
    tokensCacheWrite: i % 30,
    prState: opened ? (i % 2 ? 'merged' : 'open') : null,
    prMergedAt: opened && i % 2 ? new Date(endedAt + 3_600_000) : null,
    prompt: 'bench',
    trigger: i % 4 ? 'cli' : 'plan-run',
    seedId: i % 4 ? null : `seed-${i}`,
    updatedAt: new Date(),
  };
}

/** Seeds `count` of the bench's runs (a migrated, empty read model); answers the seconds it took. */
export async function seedBenchRuns(readModel: ReadModel, count: number): Promise<number> {
  const now = Date.now();
  const seedStarted = performance.now();
  const batch = 2000;
  for (let start = 0; start < count; start += batch)
    await readModel.em().insertMany(
      RunEntity,
      // The columns analytics reads; every other one is nullable and left out.
      Array.from({ length: Math.min(batch, count - start) }, (_, i) => benchRunRow(start + i, now)) as unknown as Run[],
    );
  // More realistic, not easier: a production read model is never read seconds after a bulk load.
  // Autovacuum (insert-triggered since PostgreSQL 13, one-minute naptime) will have vacuumed and
  // analyzed it, and a 30-day window is mostly finished, unchanging runs. Without statistics the
  // planner takes these 100k rows for a dozen and sorts where an index is walked (~770 ms p50);
  // with statistics but no visibility map every index entry walked costs a heap visit.
  // A bulk load leaves run_totals (a few hundred rows, rewritten by the trigger on every insert)
  // ~100k dead versions long; in production each projection is its own transaction, so HOT pruning
  // and autovacuum keep it a few pages. `vacuum full` gives it the size it has in service.
  if (readModel.dialect === 'postgresql') {
    await readModel.em().getConnection().execute('vacuum analyze runs');
    await readModel.em().getConnection().execute('vacuum full analyze run_totals');
  }
  return (performance.now() - seedStarted) / 1000;
}

/** Seeds `count` runs into a fresh database and times the route's answer (after two warm-ups). */
export async function measureRunAnalytics(
  databaseUrl: string,
  count = 100_000,
  samples = 15,
): Promise<AnalyticsTiming> {
  const readModel = await initORM({ databaseUrl });
  try {
    await migrate(readModel);
    const seedSeconds = await seedBenchRuns(readModel, count);
    const analytics = new AnalyticsService(new AnalyticsRepository(readModel));
    const first = await analytics.runs({});
    if (first.totals.runs !== count) throw new Error(`expected ${count} runs in the window, got ${first.totals.runs}`);
    await analytics.runs({});
    const timings: number[] = [];
    for (let i = 0; i < samples; i++) {
      const started = performance.now();
      await analytics.runs({});
      timings.push(performance.now() - started);
    }
    timings.sort((a, b) => a - b);
    return {
      runs: count,
      p50Ms: timings[Math.floor(samples / 2)]!,
      p95Ms: timings[Math.min(samples - 1, Math.floor(samples * 0.95))]!,
      seedSeconds: Math.round(seedSeconds),
    };
  } finally {
    await readModel.close();
  }
}
