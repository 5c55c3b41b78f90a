// Writes of the run projection and its event log. Both are idempotent, so an activity retried
// after a crash or a timeout changes nothing the first attempt already wrote.
import type { EntityManager } from '@mikro-orm/sql';
import type { RunSnapshot } from '../../core/run-model.ts';
import { isTerminalRunState, type EventStream } from '../../core/run-states.ts';
import { LifecycleEventEntity, RunEntity, RunEventEntity, type RunEvent } from '../../db/entities/index.ts';
import type { LifecycleHook, RunEventKind } from '../../core/event-kinds.ts';
import { dialectOfEm } from '../../db/orm.ts';
import { withoutNul } from '../../db/nul.ts';
import {
  chunkableLine,
  chunkRowValues,
  joinsChunk,
  keyPatternsOfHead,
  lastOffsetOfKey,
  outputLineKey,
  type ChunkableLine,
} from '../../db/run-event-chunks.ts';
import { fitColumns } from './fit-columns.ts';
import { insertRunRow, updateRunRow } from './run-row-sql.ts';

export interface RunEventInput {
  /** Unique per run: the same key written twice is stored once. */
  dedupeKey: string;
  kind: RunEventKind;
  stream: EventStream | null;
  ts: string;
  payload: unknown;
}

const toDate = (value: string | null) => (value === null ? null : new Date(value));

function rowFromSnapshot(snapshot: RunSnapshot) {
  return {
    ...snapshot,
    renderedAgentJson: snapshot.renderedAgentJson as unknown as Record<string, unknown>,
    startedAt: toDate(snapshot.startedAt),
    endedAt: toDate(snapshot.endedAt),
    prMergedAt: toDate(snapshot.prMergedAt),
    previewStartedAt: toDate(snapshot.previewStartedAt),
    previewLastHitAt: toDate(snapshot.previewLastHitAt),
    updatedAt: new Date(),
  };
}

/** The event a run's workflow writes when it starts to reap the agent's work (workflows/run/finalize.ts). */
const REAP_BEGINS: RunEventKind = 'finalize.intent_parked';

/**
 * The lifecycle hooks a projection crosses (docs/events.md), from the stored row to the new snapshot.
 * `pre_reap` comes when svc starts to reap the run (its agent done, its work about to be handed over,
 * pushed, salvaged), or with the end of a run that had nothing to reap; recorded once per run, it is
 * always before `post_reap`.
 */
export function lifecycleTransitions(
  before: (Pick<RunSnapshot, 'state' | 'commitsAhead'> & { prState?: RunSnapshot['prState'] }) | null,
  after: RunSnapshot,
  eventKinds: readonly RunEventKind[] = [],
): { hook: LifecycleHook; state: string | null }[] {
  const hooks: { hook: LifecycleHook; state: string | null }[] = [];
  if (!before) hooks.push({ hook: 'run_dispatched', state: 'queued' });
  if (after.state !== 'queued' && (before === null || before.state === 'queued'))
    hooks.push({ hook: 'run_started', state: 'running' });
  if ((after.commitsAhead ?? 0) > 0 && !((before?.commitsAhead ?? 0) > 0))
    hooks.push({ hook: 'branch_pushed', state: null });
  const ends = isTerminalRunState(after.state) && (before === null || !isTerminalRunState(before.state));
  if (eventKinds.includes(REAP_BEGINS) && !isTerminalRunState(after.state))
    hooks.push({ hook: 'pre_reap', state: after.state });
  // A run that ends without a reap of its own (failed, cancelled, nothing handed over): its state before the end.
  else if (ends) hooks.push({ hook: 'pre_reap', state: before?.state ?? 'queued' });
  if (ends) hooks.push({ hook: 'post_reap', state: after.state });
  if (before && after.prState !== before.prState && after.prState === 'merged')
    hooks.push({ hook: 'pr_merged', state: null });
  if (before && after.prState !== before.prState && after.prState === 'closed_unmerged')
    hooks.push({ hook: 'pr_closed', state: null });
  // A run cancelled while queued never started.
  return after.state === 'cancelled' && (before === null || before.state === 'queued')
    ? hooks.filter((hook) => hook.hook !== 'run_started')
    : hooks;
}

/** What a run row held before a projection changed it: what the metrics compare the new snapshot with. */
export type ProjectedBefore = Pick<RunSnapshot, 'state' | 'prUrl' | 'prState'> | null;

/** What a projection compares the stored row with: read as columns, no entity built. */
interface StoredRun {
  projection_version: number | string;
  state: RunSnapshot['state'];
  cost_usd: number | string | null;
  commits_ahead: number | null;
  pr_state: RunSnapshot['prState'] | null;
  pr_url: string | null;
}

/**
 * Upserts the run row unless a newer projection of it is already stored, and records the
 * lifecycle transitions it makes in the same transaction; on PostgreSQL a NOTIFY (sent at commit)
 * tells every API process's lifecycle stream. Answers the row as it was before, or undefined when
 * this projection changed nothing new (an older one, or a retry of the one stored).
 */
export async function projectRunRow(em: EntityManager, snapshot: RunSnapshot): Promise<ProjectedBefore | undefined> {
  return em.transactional((tx) => writeRunRow(tx, snapshot));
}

/**
 * projectRunRow inside the caller's transaction. The row is read as the few columns compared and
 * written with one insert or update (no entity hydrated, no change set computed): a projection is
 * three of these per run, on the run's critical path (docs/decisions/0022-read-model.md).
 */
export async function writeRunRow(
  tx: EntityManager,
  snapshot: RunSnapshot,
  eventKinds: readonly RunEventKind[] = [],
): Promise<ProjectedBefore | undefined> {
  // On PostgreSQL the row is locked until commit: an older projection still in flight (a retry's
  // first attempt) cannot read it, wait, and then write over a newer one.
  const locked = dialectOfEm(tx) === 'postgresql' ? ' for update' : '';
  const [existing] = await tx
    .getConnection()
    .execute<StoredRun[]>(
      `select projection_version, state, cost_usd, commits_ahead, pr_state, pr_url from runs where id = ?${locked}`,
      [snapshot.id],
      'all',
      tx.getTransactionContext(),
    );
  const storedVersion = existing ? Number(existing.projection_version) : null;
  if (storedVersion !== null && storedVersion > snapshot.projectionVersion) return undefined;
  const transitions = lifecycleTransitions(
    existing
      ? { state: existing.state, commitsAhead: existing.commits_ahead ?? null, prState: existing.pr_state ?? null }
      : null,
    snapshot,
    eventKinds,
  );
  const before: ProjectedBefore | undefined = !existing
    ? null
    : storedVersion === snapshot.projectionVersion
      ? undefined
      : { state: existing.state, prUrl: existing.pr_url ?? null, prState: existing.pr_state ?? null };
  const row = fitColumns(tx, RunEntity, rowFromSnapshot(snapshot));
  if (existing) await updateRunRow(tx, snapshot.id, changedColumns(row, existing));
  else await insertRunRow(tx, { ...row, lastEventSeq: 0 });
  await recordLifecycle(tx, snapshot.id, transitions);
  return before;
}

/**
 * What an update sets: not what a run never changes (its id, project, agent, creation), and not its
 * state or cost when they are as stored: run_totals' triggers fire whenever a statement sets one of
 * them (and lock the run's totals row), changed or not.
 */
function changedColumns(row: Record<string, unknown>, stored: StoredRun): Record<string, unknown> {
  const { id: _id, projectId: _project, agentName: _agent, createdAt: _created, ...changes } = row;
  if (changes.state === stored.state) delete changes.state;
  const storedCost = stored.cost_usd === null ? null : Number(stored.cost_usd);
  if ((changes.costUsd ?? null) === storedCost) delete changes.costUsd;
  return changes;
}

/** Records lifecycle transitions (once each) and, on PostgreSQL, tells every lifecycle stream at commit. */
export async function recordLifecycle(
  tx: EntityManager,
  runId: string,
  transitions: { hook: LifecycleHook; state: string | null }[],
): Promise<void> {
  if (transitions.length === 0) return;
  const ts = new Date();
  await tx
    .createQueryBuilder(LifecycleEventEntity)
    .insert(transitions.map(({ hook, state }) => ({ runId, hook, state, ts })))
    .onConflict(['runId', 'hook'])
    .ignore()
    .execute();
  if (dialectOfEm(tx) === 'postgresql')
    await tx.getConnection().execute("select pg_notify('svc_lifecycle', '')", [], 'all', tx.getTransactionContext());
}

/**
 * Appends events with per-run seqs allocated from the run row's counter. The counter update comes
 * first so the transaction holds the write lock (SQLite) or the row lock (PostgreSQL) before it
 * reads, which keeps concurrent writers of one run strictly ordered.
 */
export async function appendRunEvents(em: EntityManager, runId: string, events: RunEventInput[]): Promise<number> {
  if (events.length === 0) return 0;
  return em.transactional((tx) => insertRunEvents(tx, runId, events));
}

/**
 * An agent's poll of output can be a megabyte of short lines: its statements go in batches (as the
 * unit of work's did), never one statement the size of the whole batch.
 */
const STATEMENT_ROWS = 500;

function chunks<T>(items: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += STATEMENT_ROWS) out.push(items.slice(i, i + STATEMENT_ROWS));
  return out;
}

/**
 * The offset of the last output line stored of each head (a generation's stream) among `heads`: the
 * lines of a stream are stored in offset order (one writer's transaction at a time, each holding
 * the run's row), so every line at or before it is stored, and none after.
 */
async function storedOutputEnds(tx: EntityManager, runId: string, heads: Set<string>): Promise<Map<string, number>> {
  const ends = new Map<string, number>();
  for (const head of heads) {
    const [lines, chunks] = keyPatternsOfHead(head);
    const [latest] = await tx
      .getConnection()
      .execute<{ dedupe_key: string }[]>(
        'select dedupe_key from run_events where run_id = ? and (dedupe_key like ? or dedupe_key like ?) ' +
          'order by seq desc limit 1',
        [runId, lines, chunks],
        'all',
        tx.getTransactionContext(),
      );
    const end = latest ? lastOffsetOfKey(latest.dedupe_key) : null;
    if (end !== null) ends.set(head, end);
  }
  return ends;
}

/** appendRunEvents inside the caller's transaction: answers how many events were new. */
export async function insertRunEvents(tx: EntityManager, runId: string, events: RunEventInput[]): Promise<number> {
  const unique = [...new Map(events.map((event) => [event.dedupeKey, event])).values()];
  if (unique.length === 0) return 0;
  const connection = tx.getConnection();
  const context = tx.getTransactionContext();
  const bumped = await connection.execute<{ last_event_seq: number }[]>(
    'update runs set last_event_seq = last_event_seq + ? where id = ? returning last_event_seq',
    [unique.length, runId],
    'all',
    context,
  );
  if (bumped.length === 0) throw new Error(`run ${runId} has no read-model row yet`);
  // An output line is new when it comes after the last stored line of its stream (a retried read
  // from an older offset brings lines stored already, perhaps in a chunk); any other event when its
  // key is not stored.
  const heads = new Set(unique.flatMap((event) => outputLineKey(event.dedupeKey)?.head ?? []));
  const ends = await storedOutputEnds(tx, runId, heads);
  const keyed = unique.filter((event) => !outputLineKey(event.dedupeKey)).map((event) => event.dedupeKey);
  const seen = new Set<string>();
  for (const keys of chunks(keyed)) {
    const stored = await connection.execute<{ dedupe_key: string }[]>(
      `select dedupe_key from run_events where run_id = ? and dedupe_key in (${keys.map(() => '?').join(', ')})`,
      [runId, ...keys],
      'all',
      context,
    );
    for (const row of stored) seen.add(row.dedupe_key);
  }
  const fresh = unique.filter((event) => {
    const line = outputLineKey(event.dedupeKey);
    return line ? line.offset > (ends.get(line.head) ?? -1) : !seen.has(event.dedupeKey);
  });
  let seq = Number(bumped[0]!.last_event_seq) - unique.length;
  // Lines come from several clocks (the supervisor's reads, the workflow's time): a line is never
  // stamped earlier than the one before it, so ts never runs backwards against seq.
  const [previous] = await connection.execute<{ ts: Date | number | string }[]>(
    'select ts from run_events where run_id = ? order by seq desc limit 1',
    [runId],
    'all',
    context,
  );
  let floor = previous ? new Date(previous.ts).getTime() : 0;
  const rows: Omit<RunEvent, 'id'>[] = [];
  // Consecutive plain output lines of one stream, stamped alike, go in one chunk row.
  let chunk: { lines: ChunkableLine[]; bytes: number; seq: number; ts: number } | null = null;
  const closeChunk = () => {
    if (!chunk) return;
    const [only] = chunk.lines;
    rows.push(
      chunk.lines.length === 1
        ? row(only!.kind, only!.stream, { text: only!.text }, `${only!.head}:${only!.offset}`, chunk.seq, chunk.ts)
        : { runId, ts: new Date(chunk.ts), ...chunkRowValues(chunk.lines.map(withoutNulText), chunk.seq) },
    );
    chunk = null;
  };
  const row = (
    kind: RunEventKind,
    stream: EventStream | null,
    payload: unknown,
    key: string,
    at: number,
    ts: number,
  ) => ({
    runId,
    seq: at,
    ts: new Date(ts),
    kind,
    stream,
    // An agent's output may hold NUL, which PostgreSQL refuses (db/nul.ts).
    payload: withoutNul(payload ?? null),
    dedupeKey: key,
    lastSeq: null,
    lines: null,
  });
  for (const event of fresh) {
    seq += 1;
    floor = Math.max(floor, Date.parse(event.ts) || 0);
    const line = chunkableLine(event);
    if (chunk && line && chunk.ts === floor && joinsChunk(chunk.lines[0]!, chunk.lines.length, chunk.bytes, line)) {
      chunk.lines.push(line);
      chunk.bytes += Buffer.byteLength(line.text) + 1;
      continue;
    }
    closeChunk();
    if (line) chunk = { lines: [line], bytes: Buffer.byteLength(line.text) + 1, seq, ts: floor };
    else rows.push(row(event.kind, event.stream, event.payload, event.dedupeKey, seq, floor));
  }
  closeChunk();
  for (const batch of chunks(rows)) await tx.insertMany(RunEventEntity, batch);
  const unused = unique.length - fresh.length;
  if (unused > 0)
    await connection.execute(
      'update runs set last_event_seq = last_event_seq - ? where id = ?',
      [unused, runId],
      'run',
      context,
    );
  return fresh.length;
}

const withoutNulText = (line: ChunkableLine): ChunkableLine => ({ ...line, text: withoutNul(line.text) as string });
