// The API's reads of runs' event logs (run_events): pages after a cursor, for one run or for
// several at once (a plan-run's children), and where a run's terminal line is. A chunk row of
// output lines is read as its events (db/run-event-chunks.ts): every answer is in events.
import { RunEventEntity, type RunEvent } from '../entities/index.ts';
import type { ReadModel } from '../orm.ts';
import { CHUNK_LINES_MAX, eventsOfRows } from '../run-event-chunks.ts';

/** The rows that hold events after `afterSeq`: the seq index bounds them, a chunk can start before it. */
const holdsAfter = (afterSeq: number) => ({
  seq: { $gt: afterSeq - CHUNK_LINES_MAX },
  $or: [{ seq: { $gt: afterSeq } }, { lastSeq: { $gt: afterSeq } }],
});

/** Rows of seqs and last seqs read at once while a page's start is looked for. */
const SEQ_ROWS = 1000;

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

  /**
   * The run's events after `afterSeq` (and before `beforeSeq`), in seq order, at most `limit` of them.
   * Seqs are dense, so the rows up to `afterSeq + limit` hold the page; a gap (never written by svc)
   * only makes one more look.
   */
  async after(runId: string, afterSeq: number, limit: number, beforeSeq?: number): Promise<RunEvent[]> {
    const page: RunEvent[] = [];
    let cursor = afterSeq;
    while (page.length < limit) {
      const need = limit - page.length;
      const bound = beforeSeq === undefined ? cursor + need : Math.min(cursor + need, beforeSeq - 1);
      if (bound <= cursor) break;
      const rows = await this.#readModel
        .em()
        .find(
          RunEventEntity,
          { runId, $and: [holdsAfter(cursor), { seq: { $lte: bound } }] },
          { orderBy: { seq: 'asc' } },
        );
      for (const event of eventsOfRows(rows))
        if (event.seq > cursor && event.seq <= bound && page.length < limit) page.push(event);
      if (page.length >= limit) break;
      // Fewer than asked: the log ends here, or has a gap after `bound`.
      const next = await this.#readModel
        .em()
        .findOne(
          RunEventEntity,
          { runId, seq: beforeSeq === undefined ? { $gt: bound } : { $gt: bound, $lt: beforeSeq } },
          { orderBy: { seq: 'asc' }, fields: ['seq'] },
        );
      if (!next) break;
      cursor = next.seq - 1;
    }
    return page;
  }

  /**
   * Where a page of `count` events ending before `beforeSeq` starts: the seq just under its first
   * event, or null when fewer than `count` events come before it (the page starts at the log's start).
   */
  async pageStartBefore(runId: string, beforeSeq: number, count: number): Promise<number | null> {
    let remaining = count;
    let cursor = beforeSeq;
    for (;;) {
      const rows = await this.#readModel
        .em()
        .find(
          RunEventEntity,
          { runId, seq: { $lt: cursor } },
          { orderBy: { seq: 'desc' }, limit: SEQ_ROWS, fields: ['seq', 'lastSeq'] },
        );
      for (const row of rows) {
        const top = Math.min(row.lastSeq ?? row.seq, beforeSeq - 1);
        const events = top - row.seq + 1;
        if (events >= remaining) return top - remaining;
        remaining -= events;
      }
      if (rows.length < SEQ_ROWS) return null;
      cursor = rows.at(-1)!.seq;
    }
  }

  /**
   * The events after each cursor, in the order they were written (by id, then seq), at most `limit`
   * of them.
   */
  async afterEach(cursors: RunEventCursor[], limit: number): Promise<RunEvent[]> {
    if (cursors.length === 0) return [];
    const rows = await this.#readModel
      .em()
      .find(
        RunEventEntity,
        { $or: cursors.map(({ runId, afterSeq }) => ({ runId, ...holdsAfter(afterSeq) })) },
        { orderBy: { id: 'asc' }, limit },
      );
    const after = new Map(cursors.map(({ runId, afterSeq }) => [runId, afterSeq]));
    return eventsOfRows(rows)
      .filter((event) => event.seq > (after.get(event.runId) ?? 0))
      .slice(0, limit);
  }

  /** The seq of the run's terminal line, or null while it is not written. */
  async terminalSeq(runId: string): Promise<number | null> {
    const terminal = await this.#readModel
      .em()
      .findOne(RunEventEntity, { runId, dedupeKey: 'state:terminal' }, { fields: ['seq'] });
    return terminal?.seq ?? null;
  }
}
