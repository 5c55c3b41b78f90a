// GET /runs over a large read model: 100k runs, pages of 50 with the route's filters and sorts, as
// the route's service answers them (the page, its total, its cost: the repository's three queries)
// and presents them, against the raw SQL of the same page alone on the same connection.
import { presentRun } from '../../api/presenters/run.presenter.ts';
import { RunsRepository, type RunFilter, type RunPage } from '../../db/repositories/runs.repository.ts';
import { initORM, migrate } from '../../db/orm.ts';
import { seedBenchRuns } from './analytics.ts';

export interface RunsListTiming {
  runs: number;
  /** The slowest case's p50 (ms), and the largest ratio of a case's p50 to its raw page query's. */
  p50Ms: number;
  ratio: number;
  seedSeconds: number;
  [pageCase: string]: number | string;
}

const CASES: { name: string; filter: RunFilter; page: RunPage; sql: string; params: unknown[] }[] = [
  {
    name: 'newest',
    filter: {},
    page: { sort: 'started', dir: 'desc', limit: 50, offset: 0 },
    sql: 'select * from runs order by created_at desc, id desc limit 50',
    params: [],
  },
  {
    name: 'failed',
    filter: { states: ['failed'] },
    page: { sort: 'started', dir: 'desc', limit: 50, offset: 0 },
    sql: "select * from runs where state in ('failed') order by created_at desc, id desc limit 50",
    params: [],
  },
  {
    name: 'project page 11',
    filter: { projectId: 'prj_7' },
    page: { sort: 'started', dir: 'desc', limit: 50, offset: 500 },
    sql: "select * from runs where project_id = 'prj_7' order by created_at desc, id desc limit 50 offset 500",
    params: [],
  },
  {
    name: 'costliest',
    filter: {},
    page: { sort: 'cost', dir: 'desc', limit: 50, offset: 0 },
    sql: 'select * from runs order by cost_usd desc, created_at desc, id desc limit 50',
    params: [],
  },
];

const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function sample(work: () => Promise<unknown>, count: number): Promise<number> {
  // Warmed up as a serving process is (both sides alike): V8 has compiled the path before it is timed.
  for (let i = 0; i < 20; i++) await work();
  const timings: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await work();
    timings.push(performance.now() - started);
  }
  return p50(timings);
}

export async function measureRunsList(databaseUrl: string, count = 100_000, samples = 101): Promise<RunsListTiming> {
  const readModel = await initORM({ databaseUrl });
  try {
    await migrate(readModel);
    const seedSeconds = await seedBenchRuns(readModel, count);
    const runs = new RunsRepository(readModel);
    const connection = readModel.em().getConnection();
    const result: RunsListTiming = { runs: count, p50Ms: 0, ratio: 0, seedSeconds: Math.round(seedSeconds) };
    for (const pageCase of CASES) {
      const viaService = await sample(async () => {
        const page = await runs.page(pageCase.filter, pageCase.page);
        if (page.runs.length !== 50) throw new Error(`${pageCase.name}: ${page.runs.length} runs on the page`);
        JSON.stringify({ runs: page.runs.map(presentRun), total: page.total });
      }, samples);
      const raw = await sample(() => connection.execute(pageCase.sql, pageCase.params), samples);
      result[`${pageCase.name} p50Ms`] = Number(viaService.toFixed(2));
      result[`${pageCase.name} rawP50Ms`] = Number(raw.toFixed(2));
      result.p50Ms = Math.max(result.p50Ms, Number(viaService.toFixed(2)));
      result.ratio = Math.max(result.ratio, Number((viaService / raw).toFixed(2)));
    }
    return result;
  } finally {
    await readModel.close();
  }
}
