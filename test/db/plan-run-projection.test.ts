// The plan-run projection on both databases: the plan's events and its rows commit together (a
// reader re-reading on a plan event finds the rows it speaks of), and a retry writes nothing twice.
import test from 'ava';
import { projectPlanRun } from '../../activities/read-model/plan-run-projection.ts';
import { projectRunRow } from '../../activities/read-model/run-projection.ts';
import { BUILTIN_AGENTS } from '../../core/agents.ts';
import { DEFAULT_PLAN_TIMING, initialPlanRunSnapshot, type PlanRunSnapshot } from '../../core/plan-model.ts';
import { DEFAULT_RUN_TIMING } from '../../core/run-model.ts';
import { newId } from '../../core/ids.ts';
import { PlanRunChildEntity, PlanRunEntity, RunEventEntity } from '../../db/entities/index.ts';
import { DATABASE_LEGS, postgresOrSkip } from '../support/env.ts';
import { snapshot, withReadModel } from '../support/read-model-fixture.ts';

const at = '2026-12-01T10:00:00.000Z';

/** A running plan-run of two seeds whose first child's run is `runId`. */
function planSnapshot(runId: string): PlanRunSnapshot {
  const plan = initialPlanRunSnapshot({
    planRunId: newId('planRun'),
    createdAt: at,
    planId: 'pl-1',
    source: 'plan',
    projectId: 'prj_1',
    agent: BUILTIN_AGENTS[0]!,
    trigger: 'cli',
    seedIds: ['seed-1', 'seed-2'],
    timing: DEFAULT_PLAN_TIMING,
    runTiming: DEFAULT_RUN_TIMING,
    promptTemplate: 'work on sd {seed_id}',
    ref: null,
    providerOverride: null,
    modelOverride: null,
    maxCostUsd: null,
    dispatcherHandle: 'operator',
  });
  const [first, ...rest] = plan.children;
  const dispatchedChild = { ...first!, state: 'dispatched' as const, runId, startedAt: at };
  return { ...plan, state: 'running', startedAt: at, children: [dispatchedChild, ...rest], projectionVersion: 3 };
}

const dispatched = (runId: string) => ({
  runId,
  event: {
    dedupeKey: `dispatched:${runId}`,
    kind: 'plan_run.dispatched' as const,
    stream: 'system' as const,
    ts: at,
    payload: { seq: 1 },
  },
});

for (const leg of DATABASE_LEGS) {
  test(`${leg}: a plan projection's events and rows are written together, and once`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    await withReadModel(leg, async (readModel) => {
      const run = snapshot({ projectionVersion: 1 });
      await projectRunRow(readModel.em(), run);
      const plan = planSnapshot(run.id);
      for (let attempt = 0; attempt < 2; attempt += 1) await projectPlanRun(readModel.em(), plan, [dispatched(run.id)]);
      const em = readModel.em();
      t.is((await em.find(RunEventEntity, { runId: run.id, kind: 'plan_run.dispatched' })).length, 1);
      t.is((await em.findOneOrFail(PlanRunEntity, { id: plan.id })).state, 'running');
      const children = await em.find(PlanRunChildEntity, { planRunId: plan.id }, { orderBy: { seq: 'asc' } });
      t.deepEqual(
        children.map((child) => [child.seq, child.state, child.runId ?? null]),
        [
          [1, 'dispatched', run.id],
          [2, 'pending', null],
        ],
      );
    });
  });

  test(`${leg}: a plan projection whose rows cannot be written leaves none of its events`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    await withReadModel(leg, async (readModel) => {
      const run = snapshot({ projectionVersion: 1 });
      await projectRunRow(readModel.em(), run);
      // A plan row its table refuses (no state): the activity fails and Temporal retries it whole.
      const refused = { ...planSnapshot(run.id), state: null } as unknown as PlanRunSnapshot;
      await t.throwsAsync(projectPlanRun(readModel.em(), refused, [dispatched(run.id)]));
      const em = readModel.em();
      t.deepEqual(await em.find(RunEventEntity, { runId: run.id, kind: 'plan_run.dispatched' }), []);
      t.is(await em.findOne(PlanRunEntity, { id: refused.id }), null);
    });
  });
}
