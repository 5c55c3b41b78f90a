// The API's reads of lifecycle_events, the run transitions GET /events and GET /events/stream
// serve: the newest id, the rows after an id, and the most recent rows.
import { LifecycleEventEntity, type LifecycleEvent } from '../entities/index.ts';
import type { ReadModel } from '../orm.ts';

/** The lifecycle-event queries of the API, each on a fresh entity manager. */
export class LifecycleEventsRepository {
  readonly #readModel: ReadModel;

  constructor(readModel: ReadModel) {
    this.#readModel = readModel;
  }

  /** The highest id committed so far (0 when there is no row). */
  async newestId(): Promise<number> {
    const latest = await this.#readModel
      .em()
      .findOne(LifecycleEventEntity, { id: { $gt: 0 } }, { orderBy: { id: 'desc' }, fields: ['id'] });
    return latest?.id ?? 0;
  }

  /** The rows with an id above `afterId`, oldest first, at most `limit` of them. */
  after(afterId: number, limit: number): Promise<LifecycleEvent[]> {
    return this.#readModel.em().find(LifecycleEventEntity, { id: { $gt: afterId } }, { orderBy: { id: 'asc' }, limit });
  }

  /** The `limit` newest rows, oldest first. */
  async latest(limit: number): Promise<LifecycleEvent[]> {
    const newestFirst = await this.#readModel
      .em()
      .find(LifecycleEventEntity, { id: { $gt: 0 } }, { orderBy: { id: 'desc' }, limit });
    return newestFirst.reverse();
  }
}
