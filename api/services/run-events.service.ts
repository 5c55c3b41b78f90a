// A run's event log as NDJSON: a page of history, or history then live lines until the run ends.
// Live lines are found by polling the read model (one indexed query per interval per stream);
// streams end when the client goes away or the server shuts down. History is read in bounded
// pages, and every stream of this process shares one time slice per turn of the event loop
// (`pace`): a large read never keeps the loop from its other requests (SQLite's driver is
// synchronous, so a query never lets the loop turn by itself).
import { Readable } from 'node:stream';
import { Errors } from '../errors.ts';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { isTerminalRunState } from '../../core/run-states.ts';
import { isTerminalPlanRunState } from '../../core/plan-model.ts';
import type { RunEvent } from '../../db/entities/index.ts';
import type { ReadModel } from '../../db/orm.ts';
import { PlanRunsRepository } from '../../db/repositories/plan-runs.repository.ts';
import { RunEventsRepository } from '../../db/repositories/run-events.repository.ts';
import { RunsRepository } from '../../db/repositories/runs.repository.ts';

/** Events per query: with SQLite, one page is read in one piece of the loop's time. */
const PAGE = 100;
/** The events of one response to a spectator, at most (read on with since=<last seq>). */
export const SPECTATOR_PAGE = 1000;
/** The time every stream of this process together works in one turn of the event loop (ms). */
const SLICE_MS = 2;

let sliceStarted: number | null = null;

/**
 * Called between lines: once the streams have worked SLICE_MS in this turn of the event loop,
 * waits for the next turn, so I/O (other requests, /healthz) is served in between.
 */
export async function pace(): Promise<void> {
  const now = performance.now();
  if (sliceStarted === null) {
    sliceStarted = now;
    // The slice ends with this turn: the next turn's first line starts a new one.
    setImmediate(() => {
      sliceStarted = null;
    });
  }
  if (now - sliceStarted >= SLICE_MS) await nextTurn();
}

export function presentEvent(event: RunEvent) {
  return {
    id: event.id,
    runId: event.runId,
    seq: event.seq,
    ts: event.ts.toISOString(),
    kind: event.kind,
    stream: event.stream ?? null,
    payload: event.payload ?? null,
  };
}

/**
 * Open streams, so that a shutdown can end every one of them cleanly; following streams (each a
 * poller of the read model) are capped per process.
 */
export class StreamRegistry {
  readonly #open = new Set<AbortController>();
  readonly #following = new Set<AbortController>();
  readonly #maxFollowing: number;

  constructor(maxFollowing = 64) {
    this.#maxFollowing = maxFollowing;
  }

  /** A stream's controller; 503 event_stream_capacity when this process already follows its maximum. */
  open(follow: boolean): AbortController {
    if (follow && this.#following.size >= this.#maxFollowing) {
      throw Errors.eventStreamCapacity(
        `this server already follows ${this.#maxFollowing} event streams`,
        'retry later, or read with follow=0',
      );
    }
    const controller = new AbortController();
    this.#open.add(controller);
    if (follow) this.#following.add(controller);
    controller.signal.addEventListener(
      'abort',
      () => {
        this.#open.delete(controller);
        this.#following.delete(controller);
      },
      { once: true },
    );
    return controller;
  }

  get size(): number {
    return this.#open.size;
  }

  closeAll(): void {
    for (const controller of [...this.#open]) controller.abort();
  }
}

export interface EventStreamOptions {
  follow: boolean;
  since: number;
  limit: number | undefined;
  /** A backward page: the events before this seq (the last `limit` of them), never followed. */
  before?: number | undefined;
  /** A forward page ends once it has sent this many bytes (never before its first line). */
  maxBytes?: number | undefined;
}

export class RunEventsService {
  readonly #events: RunEventsRepository;
  readonly #runRows: RunsRepository;
  readonly #planRunRows: PlanRunsRepository;
  readonly #pollIntervalMs: number;
  readonly streams: StreamRegistry;

  constructor(readModel: ReadModel, options: { pollIntervalMs?: number; maxFollowing?: number } = {}) {
    this.#events = new RunEventsRepository(readModel);
    this.#runRows = new RunsRepository(readModel);
    this.#planRunRows = new PlanRunsRepository(readModel);
    this.#pollIntervalMs = options.pollIntervalMs ?? 200;
    this.streams = new StreamRegistry(options.maxFollowing);
  }

  /** The run has ended and its terminal line is written: nothing more will come. */
  async #finished(runId: string, lastSeq: number): Promise<boolean> {
    const state = await this.#runRows.stateOf(runId);
    if (!state || !isTerminalRunState(state)) return false;
    const terminalSeq = await this.#events.terminalSeq(runId);
    return terminalSeq !== null && terminalSeq <= lastSeq;
  }

  stream(runId: string, options: EventStreamOptions, stop: AbortSignal): Readable {
    const self = this;
    const { before } = options;
    async function* lines() {
      let last = options.since;
      if (before !== undefined && options.limit !== undefined)
        last = Math.max(last, (await self.#events.pageStartBefore(runId, before, options.limit)) ?? 0);
      let sent = 0;
      let bytes = 0;
      while (!stop.aborted) {
        const remaining = options.limit === undefined ? PAGE : Math.min(PAGE, options.limit - sent);
        const batch = await self.#events.after(runId, last, remaining, before);
        for (const event of batch) {
          await pace();
          const line = `${JSON.stringify(presentEvent(event))}\n`;
          yield line;
          last = event.seq;
          sent += 1;
          bytes += Buffer.byteLength(line);
          if (options.maxBytes !== undefined && bytes >= options.maxBytes) return;
        }
        await pace();
        if (options.limit !== undefined && sent >= options.limit) return;
        if (batch.length === remaining) continue;
        if (!options.follow || before !== undefined || (await self.#finished(runId, last))) return;
        try {
          await sleep(self.#pollIntervalMs, undefined, { signal: stop });
        } catch {
          return;
        }
      }
    }
    return Readable.from(lines());
  }

  /**
   * A plan-run's events: the union of its child runs' logs (plan events included), history then,
   * with follow, live lines until the plan-run has ended; children dispatched later are picked up
   * as they come, and each (runId, seq) is sent once.
   */
  planStream(planRunId: string, follow: boolean, stop: AbortSignal): Readable {
    const self = this;
    async function* lines() {
      const lastSeq = new Map<string, number>();
      while (!stop.aborted) {
        const runIds = await self.#planRunRows.childRunIds(planRunId);
        const cursors = runIds.map((runId) => ({ runId, afterSeq: lastSeq.get(runId) ?? 0 }));
        const batch = await self.#events.afterEach(cursors, PAGE);
        for (const event of batch) {
          if (event.seq <= (lastSeq.get(event.runId) ?? 0)) continue;
          lastSeq.set(event.runId, event.seq);
          await pace();
          yield `${JSON.stringify(presentEvent(event))}\n`;
        }
        await pace();
        if (batch.length === PAGE) continue;
        if (!follow) return;
        const planState = await self.#planRunRows.stateOf(planRunId);
        // One more look after the end, so the plan's own last event is not missed.
        if (planState && isTerminalPlanRunState(planState)) {
          if (batch.length === 0) return;
          continue;
        }
        try {
          await sleep(self.#pollIntervalMs, undefined, { signal: stop });
        } catch {
          return;
        }
      }
    }
    return Readable.from(lines());
  }
}
