// The read model's side of retention: the events of runs that ended long ago (their rows stay, with
// cost, tokens, change summary and PR, for analytics), and the last pass of each data directory.
import { TERMINAL_RUN_STATES } from '../../core/run-states.ts';
import {
  InboxMessageEntity,
  LifecycleEventEntity,
  RetentionPassEntity,
  RunEntity,
  RunEventEntity,
  type RetentionPass,
} from '../entities/index.ts';
import type { ReadModel } from '../orm.ts';

/** Runs whose events one statement deletes: small enough that no statement holds the database long. */
const RUNS_PER_BATCH = 200;

export interface EventsPruned {
  runEvents: number;
  lifecycleEvents: number;
  inboxMessages: number;
}

export class RetentionRepository {
  readonly #readModel: ReadModel;

  constructor(readModel: ReadModel) {
    this.#readModel = readModel;
  }

  /**
   * Deletes the run events and inbox messages of every run that ended before `cutoff`, and the
   * lifecycle events older than it. `progress` is called between batches (an activity's heartbeat).
   */
  async pruneEventsBefore(cutoff: Date, progress: () => void = () => {}): Promise<EventsPruned> {
    const pruned: EventsPruned = { runEvents: 0, lifecycleEvents: 0, inboxMessages: 0 };
    let after: { endedAt: Date; id: string } | null = null;
    for (;;) {
      const em = this.#readModel.em();
      const runs: { id: string; endedAt?: Date | null }[] = await em.find(
        RunEntity,
        {
          state: { $in: [...TERMINAL_RUN_STATES] },
          endedAt: { $lt: cutoff, $ne: null },
          ...(after
            ? { $or: [{ endedAt: { $gt: after.endedAt } }, { endedAt: after.endedAt, id: { $gt: after.id } }] }
            : {}),
        },
        { fields: ['id', 'endedAt'], orderBy: { endedAt: 'asc', id: 'asc' }, limit: RUNS_PER_BATCH },
      );
      if (!runs.length) break;
      const ids = runs.map((run) => run.id);
      pruned.runEvents += await em.nativeDelete(RunEventEntity, { runId: { $in: ids } });
      pruned.inboxMessages += await em.nativeDelete(InboxMessageEntity, { targetRunId: { $in: ids } });
      const last = runs.at(-1)!;
      after = { endedAt: last.endedAt!, id: last.id };
      progress();
    }
    pruned.lifecycleEvents = await this.#readModel.em().nativeDelete(LifecycleEventEntity, { ts: { $lt: cutoff } });
    return pruned;
  }

  /** Keeps `pass` as its data directory's last. */
  async recordPass(pass: RetentionPass): Promise<void> {
    await this.#readModel.em().upsert(RetentionPassEntity, pass);
  }
}
