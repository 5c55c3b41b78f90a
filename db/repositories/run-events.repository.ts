// The API's reads of runs' event logs (run_events): pages after a cursor, for one run or for
// several at once (a plan-run's children), and where a run's terminal line is.
import { RunEventEntity, type RunEvent } from '../entities/index.ts';
import type { ReadModel } from '../orm.ts';

/** Where a reader of one run's log stands: every event with a greater seq is still to come. */
export interface RunEventCursor {
  runId: string;
  afterSeq: number;
}

/** The event-log queries of the API, each on a fresh entity manager. */
export class RunEventsRepository {
  readonly #readModel: ReadModel;

  constructor(readModel: ReadModel) {
    this.#readModel = readModel;
  }

  /** The run's events after `afterSeq` (and before `beforeSeq`), in seq order, at most `limit` of them. */
  after(runId: string, afterSeq: number, limit: number, beforeSeq?: number): Promise<RunEvent[]> {
    const seq = beforeSeq === undefined ? { $gt: afterSeq } : { $gt: afterSeq, $lt: beforeSeq };
    return this.#readModel.em().find(RunEventEntity, { runId, seq }, { orderBy: { seq: 'asc' }, limit });
  }

  /**
   * Where a page of `count` events ending before `beforeSeq` starts: the seq just under its first
   * event, or null when fewer than `count` events come before it (the page starts at the log's start).
   */
  async pageStartBefore(runId: string, beforeSeq: number, count: number): Promise<number | null> {
    const [first] = await this.#readModel
      .em()
      .find(
        RunEventEntity,
        { runId, seq: { $lt: beforeSeq } },
        { orderBy: { seq: 'desc' }, offset: count - 1, limit: 1, fields: ['seq'] },
      );
    return first ? first.seq - 1 : null;
  }

  /** The events after each cursor, in the order they were written (by id), at most `limit` of them. */
  afterEach(cursors: RunEventCursor[], limit: number): Promise<RunEvent[]> {
    if (cursors.length === 0) return Promise.resolve([]);
    return this.#readModel
      .em()
      .find(
        RunEventEntity,
        { $or: cursors.map(({ runId, afterSeq }) => ({ runId, seq: { $gt: afterSeq } })) },
        { orderBy: { id: 'asc' }, limit },
      );
  }

  /** The seq of the run's terminal line, or null while it is not written. */
  async terminalSeq(runId: string): Promise<number | null> {
    const terminal = await this.#readModel
      .em()
      .findOne(RunEventEntity, { runId, dedupeKey: 'state:terminal' }, { fields: ['seq'] });
    return terminal?.seq ?? null;
  }
}
