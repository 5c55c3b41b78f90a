// GET /runs answers `total` and `costTotalUsd` from run_totals, which the database's triggers keep
// per (project, agent, state). On both databases: the migration fills it from the runs already
// there, and after inserts, state and cost changes, a project moved and a row deleted it still
// agrees with a pass over every run, for every filter the route has.
import test, { type ExecutionContext } from 'ava';
import { raw } from '@mikro-orm/core';
import { projectRunRow } from '../../activities/read-model/run-projection.ts';
import { presentRun } from '../../api/presenters/run.presenter.ts';
import type { RunState } from '../../core/run-states.ts';
import { RunEntity } from '../../db/entities/index.ts';
import type { ReadModel } from '../../db/orm.ts';
import { RunsRepository, type RunFilter } from '../../db/repositories/runs.repository.ts';
import { DATABASE_LEGS, postgresOrSkip } from '../support/env.ts';
import { snapshot, withReadModel } from '../support/read-model-fixture.ts';

const BEFORE_TOTALS = 'Migration20261124221059_run_preview_host';
const PAGE = { sort: 'started', dir: 'desc', limit: 5, offset: 0 } as const;

/** What a pass over every run says: the old way, the reference. */
/** The filter as the ORM's where: the reference the route's own SQL is checked against. */
function ormWhere(filter: RunFilter) {
  return {
    ...(filter.projectId ? { projectId: filter.projectId } : {}),
    ...(filter.agentName ? { agentName: filter.agentName } : {}),
    ...(filter.states ? { state: { $in: filter.states } } : {}),
    // A spectator's filter: only the visible projects, of which the one asked for, if any.
    ...(filter.onlyProjects
      ? { projectId: { $in: [...filter.onlyProjects].filter((id) => !filter.projectId || id === filter.projectId) } }
      : {}),
  };
}

async function reference(readModel: ReadModel, filter: RunFilter) {
  const where = ormWhere(filter);
  const row = await readModel
    .em()
    .createQueryBuilder(RunEntity)
    .select([raw('count(*) as matched'), raw('count(cost_usd) as priced'), raw('sum(cost_usd) as cost')])
    .where(where)
    .execute<{ matched: number | string; priced: number | string; cost: number | string | null }>('get');
  const priced = Number(row.priced);
  return { total: Number(row.matched), costPricedCount: priced, costTotalUsd: priced ? Number(row.cost) : null };
}

const FILTERS: RunFilter[] = [
  {},
  { projectId: 'prj_a' },
  { projectId: 'prj_b', states: ['succeeded'] },
  { agentName: 'shell' },
  { states: ['queued', 'running'] },
  { onlyProjects: new Set(['prj_a']) },
  { projectId: 'prj_b', onlyProjects: new Set(['prj_a']) },
];

async function assertAgrees(t: ExecutionContext, readModel: ReadModel, when: string) {
  const runs = new RunsRepository(readModel);
  for (const filter of FILTERS) {
    const { total, costTotalUsd, costPricedCount } = await runs.page(filter, PAGE);
    const expected = await reference(readModel, filter);
    t.is(
      total,
      expected.total,
      `${when}: total for ` +
        `${JSON.stringify({ ...filter, onlyProjects: filter.onlyProjects && [...filter.onlyProjects] })}`,
    );
    t.is(costPricedCount, expected.costPricedCount, `${when}: priced runs`);
    if (expected.costTotalUsd === null) t.is(costTotalUsd, null);
    else
      t.true(
        Math.abs(costTotalUsd! - expected.costTotalUsd) < 1e-6,
        `${when}: ${costTotalUsd} vs ${expected.costTotalUsd}`,
      );
    await assertSamePage(t, readModel, filter, when);
  }
}

/** The page as GET /runs presents it is what the ORM's entities present, in every sort, and past the end. */
async function assertSamePage(t: ExecutionContext, readModel: ReadModel, filter: RunFilter, when: string) {
  const runs = new RunsRepository(readModel);
  const where = ormWhere(filter);
  for (const page of [PAGE, { ...PAGE, sort: 'cost', dir: 'desc' }, { ...PAGE, dir: 'asc', offset: 1 }] as const) {
    const orderBy =
      page.sort === 'cost'
        ? { costUsd: page.dir, createdAt: page.dir, id: page.dir }
        : { createdAt: page.dir, id: page.dir };
    const entities = await readModel.em().find(RunEntity, where, { orderBy, limit: page.limit, offset: page.offset });
    const listed = await runs.page(filter, page);
    t.deepEqual(listed.runs.map(presentRun), entities.map(presentRun), `${when}: the page ${JSON.stringify(page)}`);
  }
  const pastTheEnd = await runs.page(filter, { ...PAGE, offset: 1000 });
  t.deepEqual(pastTheEnd.runs, []);
  t.is(pastTheEnd.total, (await runs.page(filter, PAGE)).total, `${when}: the totals past the end`);
}

const run = (projectId: string | null, state: RunState, costUsd: number | null) =>
  snapshot({ projectId, state, costUsd, projectionVersion: 1 });

/** A row as the schema before run_totals had it: only the columns that existed then (later ones may not yet). */
async function insertBeforeTotals(readModel: ReadModel, row: ReturnType<typeof run>) {
  const { id, agentName, projectId, state, costUsd, createdAt, prompt, trigger } = row;
  const values = { id, agentName, projectId, state, costUsd, createdAt, prompt, trigger, updatedAt: new Date() };
  await readModel.em().createQueryBuilder(RunEntity).insert(values).execute();
}

for (const leg of DATABASE_LEGS) {
  test(`${leg}: run_totals is filled by its migration and kept exact by the triggers`, async (t) => {
    if (!postgresOrSkip(t, leg)) return;
    await withReadModel(
      leg,
      async (readModel) => {
        await readModel.orm.migrator.up({ to: BEFORE_TOTALS });
        const early = [run('prj_a', 'succeeded', 0.1), run(null, 'failed', null), run('prj_b', 'succeeded', 0.25)];
        for (const row of early) await insertBeforeTotals(readModel, row);
        await readModel.orm.migrator.up();
        await assertAgrees(t, readModel, 'after the migration');

        const later = [run('prj_a', 'queued', null), run('prj_b', 'running', null), run('prj_a', 'running', 0.05)];
        for (const row of later) await projectRunRow(readModel.em(), row);
        // A run goes on: it ends, with its cost; another's cost grows; one row moves project, one is deleted.
        await projectRunRow(readModel.em(), { ...later[0]!, state: 'succeeded', costUsd: 0.3, projectionVersion: 2 });
        await projectRunRow(readModel.em(), { ...later[2]!, costUsd: 0.07, projectionVersion: 2 });
        await readModel.em().nativeUpdate(RunEntity, { id: early[1]!.id }, { projectId: 'prj_a' });
        await readModel.em().nativeDelete(RunEntity, { id: early[2]!.id });
        await assertAgrees(t, readModel, 'after the changes');
        t.like(await new RunsRepository(readModel).page({}, PAGE), { total: 5, costPricedCount: 3 });
        // However a row came by an absurd cost, the totals hold it at the most a run may claim.
        await readModel.em().nativeUpdate(RunEntity, { id: later[1]!.id }, { costUsd: 1e300 });
        const absurd = await new RunsRepository(readModel).page({}, PAGE);
        t.like(absurd, { total: 5, costPricedCount: 4 });
        t.true(Math.abs(absurd.costTotalUsd! - (1_000_000 + 0.1 + 0.3 + 0.07)) < 1e-6, String(absurd.costTotalUsd));
      },
      { migrated: false },
    );
  });
}
