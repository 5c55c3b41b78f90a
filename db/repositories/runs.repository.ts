// The API's reads of the run projection, in one place: the services ask questions ("this run",
// "a page of runs", "how many are active"), and how they are answered in SQL lives here.
// Writes are the activities' (activities/read-model/).
import type { RunState } from '../../core/run-states.ts';
import { RunEntity, type Run } from '../entities/index.ts';
import { readRunPage, type RunFilter, type RunPage } from './run-page-sql.ts';
import type { ReadModel } from '../orm.ts';

export type { RunFilter, RunPage } from './run-page-sql.ts';

const ACTIVE_STATES: RunState[] = ['queued', 'running'];

/** The run queries of the API: one named method per question, each on a fresh entity manager. */
export class RunsRepository {
  readonly #readModel: ReadModel;

  constructor(readModel: ReadModel) {
    this.#readModel = readModel;
  }

  /** The run's row, or null before its first projection (or when there is no such run). */
  find(id: string): Promise<Run | null> {
    return this.#readModel.em().findOne(RunEntity, { id });
  }

  /** Only the run's state: the cheap look-up of the auth and stream paths. */
  async stateOf(id: string): Promise<RunState | null> {
    return (await this.#readModel.em().findOne(RunEntity, { id }, { fields: ['state'] }))?.state ?? null;
  }

  /** These runs, oldest first (a plan-run's children). */
  byIds(ids: string[]): Promise<Run[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.#readModel.em().find(RunEntity, { id: { $in: ids } }, { orderBy: { createdAt: 'asc' } });
  }

  /** Runs of the project that are queued or running. */
  countActive(projectId: string): Promise<number> {
    return this.#readModel.em().count(RunEntity, { projectId, state: { $in: ACTIVE_STATES } });
  }

  /** Runs queued across the instance (admission's queue depth). */
  countQueued(): Promise<number> {
    // Runs waiting for a concurrency slot are accepted work, not pressure on the cluster.
    return this.#readModel.em().count(RunEntity, { state: 'queued', queueReason: null });
  }

  /** One page of runs, the total that match, and the cost over all of them (not only the page). */
  page(filter: RunFilter, page: RunPage) {
    return readRunPage(this.#readModel, filter, page);
  }
}
