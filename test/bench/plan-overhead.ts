// Coordinator overhead of a plan-run: a ten-seed plan of a trivial agent against the real stack,
// with a forge stand-in that merges every PR at once. Per child it measures what the plan-run
// itself adds: from learning that child i-1 merged to child i's run being dispatched (refresh of
// the clone, seed read, child workflow start), and how long merge detection took (the child
// run's PR poll interval dominates it).
import { planFixture } from '../support/plan-fixture.ts';
import { waitFor } from '../support/processes.ts';
import { startIsolatedStack } from '../support/stack.ts';

export interface PlanOverhead {
  children: number;
  wallSeconds: number;
  dispatchAfterMergeMsMean: number;
  dispatchAfterMergeMsMax: number;
  mergeDetectionMsMean: number;
}

export async function measurePlanOverhead(seeds = 10): Promise<PlanOverhead> {
  const fixture = await planFixture(
    'bench',
    'ten-seeds',
    Array.from({ length: seeds }, (_, i) => `Seed number ${i + 1}`),
  );
  Object.assign(process.env, fixture.env);
  const isolated = await startIsolatedStack();
  try {
    const { api } = isolated;
    const project = (await api.request('POST', '/projects', { body: { gitUrl: 'https://github.com/bench/ten-seeds' } }))
      .body.project.id;
    const started = Date.now();
    const { body } = await api.request('POST', '/plan-runs', {
      body: { project, agent: 'shell', planId: fixture.planId, promptTemplate: fixture.template },
    });
    await waitFor(
      async () =>
        (await api.request('GET', `/plan-runs/${body.planRun.id}`)).body.planRun.state === 'succeeded'
          ? true
          : undefined,
      'the ten-seed plan-run',
      600_000,
    );
    const wallSeconds = (Date.now() - started) / 1000;
    const events = (await api.request('GET', `/plan-runs/${body.planRun.id}/events`)).text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const at = (kind: string, field: string, seq: number) =>
      events.find((event) => event.kind === kind && event.payload[field] === seq);
    const gaps: number[] = [];
    const detection: number[] = [];
    for (let seq = 1; seq <= seeds; seq++) {
      const merged = at('plan_run.merged', 'mergedChildSeq', seq)!;
      detection.push(Date.parse(merged.ts) - Date.parse(merged.payload.mergedAt));
      if (seq > 1)
        gaps.push(
          Date.parse(at('plan_run.dispatched', 'seq', seq)!.ts) -
            Date.parse(at('plan_run.merged', 'mergedChildSeq', seq - 1)!.ts),
        );
    }
    const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
    return {
      children: seeds,
      wallSeconds,
      dispatchAfterMergeMsMean: Math.round(mean(gaps)),
      dispatchAfterMergeMsMax: Math.max(...gaps),
      mergeDetectionMsMean: Math.round(mean(detection)),
    };
  } finally {
    fixture.stopReviewer();
    await fixture.forge.stop();
    await isolated.stop();
  }
}
