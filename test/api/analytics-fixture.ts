// The runs test/api/analytics.test.ts aggregates, with every value chosen so the expected numbers
// can be worked out by hand (costs are exact in binary, so sums agree on both databases).
import type { EntityManager } from '@mikro-orm/sql';
import type { CloneKind, CostBasis, PrState, RunFailureReason, RunState } from '../../core/run-states.ts';
import { Spectators } from '../../api/presenters/spectator.ts';
import { InboxMessageEntity, PlanRunChildEntity, RunEntity } from '../../db/entities/index.ts';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const SECOND = 1000;
/** 2026-11-10T00:00:00Z: the first day of the window the tests mostly ask about. */
export const D = Date.UTC(2026, 10, 10);
/** The end of the window a date-only `to=2026-11-12` gives. */
const WINDOW_END = Date.UTC(2026, 10, 12, 23, 59, 59, 999);

export const WINDOW = { from: '2026-11-10', to: '2026-11-12' };

interface SeedRun {
  id: string;
  agentName: string;
  model?: string;
  provider?: string;
  projectId: string | null;
  state: RunState;
  failureReason?: RunFailureReason;
  createdAt: number;
  queueMs?: number;
  durationMs?: number;
  endedAt?: number;
  costUsd?: number;
  costBasis?: CostBasis;
  tokens?: [number, number, number, number];
  prState?: PrState;
  mergedAfterEndMs?: number;
  /** The dispatch context (test/api/analytics-more.test.ts): trigger (default cli), clone, seed, cap. */
  trigger?: string;
  clone?: [CloneKind, string];
  seedId?: string;
  maxCostUsd?: number;
  /** The measured change: files changed, insertions, deletions. */
  change?: [number, number, number];
  /** Its PR loop (docs/pr-loop.md): follow-up rounds, and the PR's total cost. */
  prLoop?: [number, number];
}

const A = { agentName: 'builder', model: 'm-a', provider: 'anthropic' };

const RUNS: SeedRun[] = [
  // Steered, merged after an hour, a child of plan-1.
  {
    id: 'r1',
    ...A,
    projectId: 'P1',
    state: 'succeeded',
    createdAt: D + HOUR,
    queueMs: 10 * SECOND,
    durationMs: 100 * SECOND,
    costUsd: 1.5,
    tokens: [100, 50, 10, 5],
    prState: 'merged',
    mergedAfterEndMs: HOUR,
    trigger: 'plan-run',
    seedId: 'seed-1',
    change: [3, 30, 5],
    prLoop: [2, 3.5],
  },
  {
    id: 'r2',
    ...A,
    projectId: 'P1',
    state: 'failed',
    failureReason: 'crashed',
    createdAt: D + 2 * HOUR,
    queueMs: 20 * SECOND,
    durationMs: 200 * SECOND,
    costUsd: 0.5,
    tokens: [200, 100, 0, 0],
    seedId: 'seed-2',
    change: [0, 0, 0],
  },
  // The last millisecond of 2026-11-11 (UTC): bucketed on that day.
  {
    id: 'r3',
    agentName: 'reviewer',
    model: 'm-b',
    provider: 'openai',
    projectId: 'P2',
    state: 'succeeded',
    createdAt: D + 2 * DAY - 1,
    queueMs: 30 * SECOND,
    durationMs: 300 * SECOND,
    costUsd: 2,
    costBasis: 'subscription_estimate',
    tokens: [300, 150, 20, 10],
    prState: 'closed_unmerged',
    trigger: 'cron',
    clone: ['replicate', 'r2'],
    change: [12, 100, 20],
  },
  // Cancelled while queued: never started, unpriced, no model.
  {
    id: 'r4',
    agentName: 'reviewer',
    projectId: 'P2',
    state: 'cancelled',
    createdAt: D + 2 * DAY,
    endedAt: D + 2 * DAY + 5 * SECOND,
    trigger: 'manual-trigger',
  },
  {
    id: 'r5',
    ...A,
    projectId: null,
    state: 'running',
    createdAt: D + 2 * DAY + HOUR,
    queueMs: 40 * SECOND,
    costUsd: 0.25,
    tokens: [10, 0, 0, 0],
    maxCostUsd: 1,
  },
  // Merged two hours after its end, a child of plan-1.
  {
    id: 'r6',
    ...A,
    model: 'm-b',
    provider: 'openai',
    projectId: 'P1',
    state: 'succeeded',
    createdAt: D + 2 * DAY + 2 * HOUR,
    queueMs: 50 * SECOND,
    durationMs: 400 * SECOND,
    costUsd: 4,
    tokens: [1000, 500, 0, 0],
    prState: 'merged',
    mergedAfterEndMs: 2 * HOUR,
    trigger: 'plan-run',
    change: [25, 400, 100],
    prLoop: [1, 4.75],
  },
  // Steered.
  {
    id: 'r7',
    ...A,
    projectId: 'P1',
    state: 'failed',
    failureReason: 'timed_out',
    createdAt: D + 2 * DAY + 3 * HOUR,
    queueMs: 60 * SECOND,
    durationMs: 600 * SECOND,
    costUsd: 1,
    trigger: 'manual',
    clone: ['continue', 'r2'],
    maxCostUsd: 5,
  },
  // Outside the window: before it (inside the 90-day cap), after it, and beyond the cap.
  { id: 'r8', ...A, projectId: 'P1', state: 'succeeded', createdAt: D - 40 * DAY, costUsd: 100, prLoop: [5, 200] },
  { id: 'r9', ...A, projectId: 'P1', state: 'succeeded', createdAt: D + 3 * DAY, costUsd: 50 },
  { id: 'r10', ...A, projectId: 'P1', state: 'succeeded', createdAt: WINDOW_END - 91 * DAY, costUsd: 1000 },
];

/**
 * Writes the runs, r1 and r6 as children of plan-1 (r6 a retry, r8 of plan-2), and steering messages to
 * r1 (two, one unread) and r7.
 */
export async function seedAnalyticsRuns(em: EntityManager): Promise<void> {
  for (const run of RUNS) {
    const startedAt = run.queueMs === undefined ? null : run.createdAt + run.queueMs;
    const endedAt =
      run.endedAt ?? (startedAt !== null && run.durationMs !== undefined ? startedAt + run.durationMs : null);
    em.create(RunEntity, {
      id: run.id,
      agentName: run.agentName,
      model: run.model ?? null,
      provider: run.provider ?? null,
      projectId: run.projectId,
      state: run.state,
      failureReason: run.failureReason ?? null,
      createdAt: run.createdAt,
      startedAt: startedAt === null ? null : new Date(startedAt),
      endedAt: endedAt === null ? null : new Date(endedAt),
      costUsd: run.costUsd ?? null,
      costBasis: run.costBasis ?? 'api',
      tokensInput: run.tokens?.[0] ?? null,
      tokensOutput: run.tokens?.[1] ?? null,
      tokensCacheRead: run.tokens?.[2] ?? null,
      tokensCacheWrite: run.tokens?.[3] ?? null,
      prState: run.prState ?? null,
      prMergedAt: run.mergedAfterEndMs === undefined ? null : new Date(endedAt! + run.mergedAfterEndMs),
      prompt: 'analytics',
      trigger: run.trigger ?? 'cli',
      cloneKind: run.clone?.[0] ?? null,
      parentRunId: run.clone?.[1] ?? null,
      seedId: run.seedId ?? null,
      maxCostUsd: run.maxCostUsd ?? null,
      filesChanged: run.change?.[0] ?? null,
      insertions: run.change?.[1] ?? null,
      deletions: run.change?.[2] ?? null,
      prRounds: run.prLoop?.[0] ?? null,
      prCostUsd: run.prLoop?.[1] ?? null,
      updatedAt: new Date(),
    });
  }
  const child = (planRunId: string, seq: number, runId: string | null, retryCount = 0) =>
    em.create(PlanRunChildEntity, {
      planRunId,
      seq,
      seedId: `seed-${seq}`,
      runId,
      retryCount,
      state: runId ? 'merged' : 'pending',
      createdAt: new Date(D),
      updatedAt: new Date(D),
    });
  child('plan-1', 1, 'r1');
  // r6 replaced a run of this child that hit a provider error.
  child('plan-1', 2, 'r6', 1);
  child('plan-1', 3, null);
  child('plan-2', 1, 'r8');
  const message = (id: string, seq: number, targetRunId: string, state: 'delivered' | 'unread' = 'delivered') =>
    em.create(InboxMessageEntity, {
      id,
      seq,
      targetRunId,
      body: 'steer',
      priority: 'normal',
      fromActor: 'operator',
      state,
      createdAt: new Date(D + 2 * DAY),
    });
  message('m1', 1, 'r1');
  message('m2', 2, 'r1', 'unread');
  message('m3', 3, 'r7');
  message('m4', 4, 'r8');
  await em.flush();
}

/** The spectator policy of the tests: P1 (acme) is visible, P2 is not. */
export const spectators = new Spectators({
  allowlist: ['acme'],
  secrets: [],
  hiddenPaths: [],
  showsPrompts: async () => false,
  projects: async () => [
    { id: 'P1', gitUrl: 'https://github.com/acme/one' },
    { id: 'P2', gitUrl: 'https://github.com/other/two' },
  ],
});

// Expected values, written out.

export const dist = (avg: number | null, median: number | null, p95: number | null, count: number) => ({
  avg,
  median,
  p95,
  count,
});
export const tokens = (input: number, output: number, cacheRead: number, cacheWrite: number) => ({
  input,
  output,
  cacheRead,
  cacheWrite,
  total: input + output + cacheRead + cacheWrite,
});

/** An expected group bucket as the operator sees it (with costUsd and priced). */
export function bucket(
  key: string,
  [runs, succeeded, failed, cancelled]: number[],
  [prStateKnown, prsMerged]: number[],
  tokenCounts: number[],
  [costUsd, priced]: number[],
  avgDurationMs: number | null,
  [successRate, mergedPrRate]: (number | null)[],
) {
  return {
    key,
    runs: runs!,
    succeeded: succeeded!,
    failed: failed!,
    cancelled: cancelled!,
    successRate: successRate ?? null,
    prStateKnown: prStateKnown!,
    prsMerged: prsMerged!,
    mergedPrRate: mergedPrRate ?? null,
    tokens: tokens(...(tokenCounts as [number, number, number, number])),
    costUsd: costUsd!,
    priced: priced!,
    avgDurationMs,
  };
}

export const perPr = (
  key: string | undefined,
  [costUsd, priced, prStateKnown, prsMerged]: number[],
  costPerMergedPrUsd: number | null,
) => ({
  ...(key === undefined ? {} : { key }),
  costUsd,
  priced,
  prStateKnown,
  prsMerged,
  costPerMergedPrUsd,
});
