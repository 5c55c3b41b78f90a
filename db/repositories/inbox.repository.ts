// The API's reads of the steering inbox projection (inbox_messages). The live inbox is the run
// workflow's; these rows answer for a run whose workflow no longer holds one.
import { InboxMessageEntity, type InboxMessage } from '../entities/index.ts';
import type { ReadModel } from '../orm.ts';

/** The inbox queries of the API, each on a fresh entity manager. */
export class InboxRepository {
  readonly #readModel: ReadModel;

  constructor(readModel: ReadModel) {
    this.#readModel = readModel;
  }

  /** Whether any message addressed to the run is unclaimed (one indexed lookup). */
  async hasUnread(runId: string): Promise<boolean> {
    return (await this.#readModel.em().count(InboxMessageEntity, { targetRunId: runId, state: 'unread' })) > 0;
  }

  /** The messages addressed to the run that nobody has claimed, oldest first. */
  unreadFor(runId: string): Promise<InboxMessage[]> {
    return this.#readModel
      .em()
      .find(InboxMessageEntity, { targetRunId: runId, state: 'unread' }, { orderBy: { seq: 'asc' } });
  }
}
