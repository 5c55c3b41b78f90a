// Run lifecycle transitions for GET /events/stream. The projection writes each transition to
// lifecycle_events in the run row's transaction; each API process has ONE source that finds new
// rows and fans them out to its subscribers: on PostgreSQL a LISTEN connection woken by the
// projection's NOTIFY (so every API process on the database sees every transition), on SQLite a
// watch on the database's write-ahead log, which every commit of any process on this machine
// writes (inotify), with a poll behind it. Never a query per client. Each subscriber holds at most 512 lines, dropping
// the
// oldest. No replay: a stream starts at "now", the newest row committed when it subscribed. Every
// line is a JSON object (no blank keep-alive lines); TCP keep-alive holds an idle stream open.
import { existsSync, watch, type FSWatcher } from 'node:fs';
import type pg from 'pg';
import type { LifecycleEvent } from '../../db/entities/index.ts';
import type { ReadModel } from '../../db/orm.ts';
import { LifecycleEventsRepository } from '../../db/repositories/lifecycle-events.repository.ts';
import { Errors } from '../errors.ts';

export interface LifecycleLine {
  runId: string;
  hook: string;
  state: string | null;
  ts: string;
}

export interface LifecycleHubSettings {
  maxStreams: number;
  bufferLines: number;
  keepAliveMs: number;
  /** SQLite's poll interval; PostgreSQL's safety re-read in case a notification was missed. */
  pollMs: number;
}

const REREAD_WINDOW = 200;
/**
 * After a change to the log, the drains: the first soon (a busy log is then read at most this
 * often: a burst of commits makes a few drains, not hundreds), then when a commit's sync has surely
 * ended, then once late (a frame written just before its commit shows). A row is visible only once
 * its commit is synced: the first look finds it when the disk is quick, the next ones otherwise.
 */
const WAL_LOOKS_MS = [5, 15, 100] as const;

export const DEFAULT_LIFECYCLE_SETTINGS = { maxStreams: 64, bufferLines: 512, keepAliveMs: 15_000 };
/** Lines that arrive while a new subscriber's starting point is still being read. */
const MAX_EARLY_LINES = 512;

/** Where a subscriber's lines go: an HTTP response, or anything that writes and drains like one. */
export interface LineSink {
  /** False: the socket is full; write again after 'drain'. */
  write(line: string): boolean;
  once(event: 'drain', listener: () => void): unknown;
  end(): unknown;
}

interface Subscriber {
  offer(id: number, line: string): void;
  end(): void;
}

export const presentLifecycleEvent = (event: LifecycleEvent) => ({
  id: event.id,
  runId: event.runId,
  hook: event.hook,
  state: event.state ?? null,
  ts: event.ts.toISOString(),
});

export class LifecycleHub {
  readonly #readModel: ReadModel;
  readonly #events: LifecycleEventsRepository;
  readonly #settings: LifecycleHubSettings;
  readonly #subscribers = new Set<Subscriber>();
  #lastId: number | undefined;
  /** Ids already sent: a transaction that commits after a later id must still be found. */
  readonly #sent = new Set<number>();
  /** Rows up to here existed before this process started: no replay. */
  #baseline = 0;
  #draining: Promise<void> | undefined;
  #again = false;
  #listener: pg.Client | undefined;
  #timer: NodeJS.Timeout | undefined;
  #walWatch: FSWatcher | undefined;
  #walWake: NodeJS.Timeout | undefined;
  #walLater: NodeJS.Timeout[] = [];
  #closed = false;

  constructor(readModel: ReadModel, settings: LifecycleHubSettings) {
    this.#readModel = readModel;
    this.#events = new LifecycleEventsRepository(readModel);
    this.#settings = settings;
  }

  /** Idle time before TCP keep-alive probes on a held stream (no blank lines on the wire). */
  get keepAliveMs(): number {
    return this.#settings.keepAliveMs;
  }

  get size(): number {
    return this.#subscribers.size;
  }

  async start(): Promise<void> {
    this.#lastId = await this.#events.newestId();
    this.#baseline = this.#lastId;
    if (this.#readModel.dialect === 'postgresql') {
      // Loaded only here: a SQLite read model never needs PostgreSQL's client.
      const { default: Pg } = await import('pg');
      this.#listener = new Pg.Client({ connectionString: this.#readModel.databaseUrl });
      this.#listener.on('notification', () => this.#wake());
      // A lost listener connection is not fatal: the safety poll below still finds every row.
      this.#listener.on('error', () => undefined);
      await this.#listener.connect();
      await this.#listener.query('LISTEN svc_lifecycle');
    } else this.#watchWriteAheadLog();
    const interval =
      this.#readModel.dialect === 'postgresql' ? Math.max(this.#settings.pollMs, 5000) : this.#settings.pollMs;
    this.#timer = setInterval(() => this.#subscribers.size > 0 && this.#wake(), interval);
    this.#timer.unref();
  }

  /**
   * A new stream of lifecycle lines, held from now until `stop` aborts; 503 event_stream_capacity
   * when the process holds its maximum. Its lines go to the sink it is then attached to (the HTTP
   * response itself: ~1,000 held streams per process, and a Readable piped through Koa cost each
   * one a dozen listeners more), which it ends when stopped; until then they wait.
   */
  subscribe(stop: AbortSignal): (sink: LineSink) => void {
    if (this.#closed || this.#subscribers.size >= this.#settings.maxStreams) {
      throw Errors.eventStreamCapacity(
        `this server already holds ${this.#settings.maxStreams} lifecycle streams`,
        'retry later, or poll GET /events',
      );
    }
    // Lines the socket has not taken yet (a slow reader), at most bufferLines, oldest dropped.
    const queue: string[] = [];
    let out: LineSink | undefined;
    let writable = false;
    // Rows up to `floor` were committed before this stream began: never sent to it. Until the floor
    // is known (one query), lines wait in `early`.
    let floor: number | undefined;
    let early: { id: number; line: string }[] = [];
    let ended = false;
    const flush = () => {
      while (out && writable && queue.length && !ended) {
        writable = out.write(queue.shift()!);
        if (!writable) out.once('drain', () => ((writable = true), flush()));
      }
    };
    const deliver = (line: string) => {
      queue.push(line);
      if (queue.length > this.#settings.bufferLines) queue.shift();
      flush();
    };
    const subscriber: Subscriber = {
      offer: (id, line) => {
        if (floor === undefined) {
          early.push({ id, line });
          if (early.length > MAX_EARLY_LINES) early.shift();
        } else if (id > floor) deliver(line);
      },
      end: () => {
        if (ended) return;
        ended = true;
        this.#subscribers.delete(subscriber);
        out?.end();
      },
    };
    const alone = this.#subscribers.size === 0;
    this.#subscribers.add(subscriber);
    stop.addEventListener('abort', () => subscriber.end(), { once: true });
    this.#events.newestId().then(
      (newest) => {
        floor = newest;
        // Nobody else listens: skip the rows written while no one did, instead of reading them.
        if (alone && (this.#lastId ?? 0) < newest) this.#lastId = newest;
        for (const { id, line } of early) if (id > newest) deliver(line);
        early = [];
      },
      () => subscriber.end(),
    );
    return (sink) => {
      out = sink;
      writable = true;
      if (ended) sink.end();
      else flush();
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    clearTimeout(this.#walWake);
    for (const timer of this.#walLater) clearTimeout(timer);
    this.#walWatch?.close();
    for (const subscriber of [...this.#subscribers]) subscriber.end();
    await this.#listener?.end().catch(() => undefined);
  }

  /** GET /events: the transitions after `since`, or without it the newest ones; oldest first either way. */
  async recent(since: number | undefined, limit: number) {
    const rows = since === undefined ? await this.#events.latest(limit) : await this.#events.after(since, limit);
    return rows.map(presentLifecycleEvent);
  }

  /**
   * SQLite in WAL mode: every commit, whichever process makes it, appends to `<db>-wal`, which
   * exists while this process holds the database open. Its changes wake a drain (throttled); the
   * poll stays for what a watch can miss (a log replaced by a checkpoint, a file system without
   * inotify).
   */
  #watchWriteAheadLog(): void {
    const log = `${this.#readModel.databaseUrl}-wal`;
    if (this.#closed || this.#readModel.databaseUrl === ':memory:' || !existsSync(log)) return;
    try {
      this.#walWatch = watch(log, { persistent: false }, (event) => {
        // A log replaced under the watch: watch the new one (the poll covers the moment between).
        if (event === 'rename') return this.#rewatch();
        if (this.#walWake || this.#subscribers.size === 0) return;
        const [first, ...later] = WAL_LOOKS_MS;
        this.#walWake = setTimeout(() => {
          this.#walWake = undefined;
          this.#wake();
          for (const timer of this.#walLater) clearTimeout(timer);
          this.#walLater = later.map((ms) => setTimeout(() => this.#wake(), ms - first));
        }, first);
      });
      this.#walWatch.on('error', () => this.#rewatch());
    } catch {
      // No inotify here: the poll alone.
    }
  }

  #rewatch(): void {
    this.#walWatch?.close();
    this.#walWatch = undefined;
    setTimeout(() => this.#watchWriteAheadLog(), 1000).unref();
  }

  /**
   * How far below the highest id sent a drain looks again. PostgreSQL allocates ids at insert, so
   * a transaction can commit after a later id; SQLite has one writer at a time: ids commit in order.
   */
  get #rereadWindow(): number {
    return this.#readModel.dialect === 'postgresql' ? REREAD_WINDOW : 0;
  }

  /** One drain at a time; a wake-up during a drain runs one more. */
  #wake(): void {
    if (this.#draining) {
      this.#again = true;
      return;
    }
    this.#draining = this.#drain()
      .catch(() => undefined)
      .finally(() => {
        this.#draining = undefined;
        if (this.#again) {
          this.#again = false;
          this.#wake();
        }
      });
  }

  async #drain(): Promise<void> {
    for (;;) {
      // Re-read a window below the highest id sent: ids are allocated at insert, not at commit.
      const rows = await this.#events.after(Math.max(0, (this.#lastId ?? 0) - this.#rereadWindow), 500);
      const fresh = rows.filter((row) => !this.#sent.has(row.id) && row.id > this.#baseline);
      for (const row of fresh) {
        this.#lastId = Math.max(this.#lastId ?? 0, row.id);
        this.#sent.add(row.id);
        const transition = {
          runId: row.runId,
          hook: row.hook,
          state: row.state ?? null,
          ts: row.ts.toISOString(),
        } satisfies LifecycleLine;
        const line = `${JSON.stringify(transition)}\n`;
        for (const subscriber of this.#subscribers) subscriber.offer(row.id, line);
      }
      for (const id of this.#sent) if (id <= (this.#lastId ?? 0) - this.#rereadWindow) this.#sent.delete(id);
      if (rows.length < 500 || fresh.length === 0) return;
    }
  }
}
