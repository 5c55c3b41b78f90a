// Agent output stored compactly (docs/decisions/0047-compact-output-storage.md): consecutive output
// lines of one stream, read together, are one run_events row (a chunk: seq..lastSeq, their texts in
// `lines`); every reader sees them as the events they were, each with its own seq. This module is
// the one home of the chunk's shape: how lines make a chunk, and how a row is read back as events.
import type { RunEventKind } from '../core/event-kinds.ts';
import type { EventStream } from '../core/run-states.ts';
import type { RunEvent } from './entities/index.ts';

/** The lines of one chunk row, at most: a reader that wants one line reads at most this many others. */
export const CHUNK_LINES_MAX = 500;
/** The bytes of one chunk row's lines, at most (a row is read whole). */
export const CHUNK_BYTES_MAX = 64 * 1024;

/** The key of an output line (activities/output-ingest.ts): `[g<generation>:]<stream>:<byte offset>`. */
const LINE_KEY = /^((?:g\d+:)?(?:stdout|stderr)):(\d+)$/;
/** The key of a chunk: `<head>/<first line's offset>-<last line's offset>`. */
const CHUNK_KEY = /^((?:g\d+:)?(?:stdout|stderr))\/(\d+)-(\d+)$/;

/** An output line's key, split: its head (generation and stream) and its byte offset in the stream. */
export function outputLineKey(key: string): { head: string; offset: number } | null {
  const match = LINE_KEY.exec(key);
  return match ? { head: match[1]!, offset: Number(match[2]) } : null;
}

/**
 * The offset of the last line a stored row holds of its head's stream: a line's own, or a chunk's
 * last; null for a row of anything else.
 */
export function lastOffsetOfKey(key: string): number | null {
  const chunk = CHUNK_KEY.exec(key);
  if (chunk) return Number(chunk[3]);
  return outputLineKey(key)?.offset ?? null;
}

/** The `like` patterns of the stored rows of a head: its lines' keys and its chunks' keys. */
export function keyPatternsOfHead(head: string): [string, string] {
  return [`${head}:%`, `${head}/%`];
}

/** An output line that may go in a chunk: a plain log line of the agent, one text without a newline. */
export interface ChunkableLine {
  head: string;
  offset: number;
  kind: RunEventKind;
  stream: EventStream;
  text: string;
}

export function chunkableLine(event: {
  dedupeKey: string;
  kind: RunEventKind;
  stream: EventStream | null;
  payload: unknown;
}): ChunkableLine | null {
  if (event.kind !== 'log.stdout' && event.kind !== 'log.stderr') return null;
  if (event.stream !== 'stdout' && event.stream !== 'stderr') return null;
  const key = outputLineKey(event.dedupeKey);
  const payload = event.payload as Record<string, unknown> | null;
  if (!key || !payload || typeof payload !== 'object' || Array.isArray(payload)) return null;
  const keys = Object.keys(payload);
  if (keys.length !== 1 || typeof payload.text !== 'string' || payload.text.includes('\n')) return null;
  return { ...key, kind: event.kind, stream: event.stream, text: payload.text };
}

/** Whether `line` may join a chunk that holds `first` and `count` lines of `bytes` bytes. */
export function joinsChunk(first: ChunkableLine, count: number, bytes: number, line: ChunkableLine): boolean {
  return (
    line.head === first.head &&
    line.kind === first.kind &&
    count < CHUNK_LINES_MAX &&
    bytes + Buffer.byteLength(line.text) + 1 <= CHUNK_BYTES_MAX
  );
}

/** The stored form of a chunk of lines (at least two) whose first seq is `seq`. */
export function chunkRowValues(lines: ChunkableLine[], seq: number) {
  const first = lines[0]!;
  return {
    seq,
    lastSeq: seq + lines.length - 1,
    kind: first.kind,
    stream: first.stream,
    payload: null,
    lines: lines.map((line) => line.text).join('\n'),
    dedupeKey: `${first.head}/${first.offset}-${lines.at(-1)!.offset}`,
  };
}

/** The events a stored row holds: the row itself, or each line of a chunk as the event it was. */
export function eventsOfRow(row: RunEvent): RunEvent[] {
  if (row.lastSeq === null || row.lastSeq === undefined || row.lines === null || row.lines === undefined)
    return [{ ...row, lastSeq: null, lines: null }];
  const texts = row.lines.split('\n');
  return texts.map((text, i) => ({
    id: row.id,
    runId: row.runId,
    seq: row.seq + i,
    ts: row.ts,
    kind: row.kind,
    stream: row.stream ?? null,
    payload: { text },
    dedupeKey: `${row.dedupeKey}#${i}`,
    lastSeq: null,
    lines: null,
  }));
}

/** The events of stored rows, in the rows' order. */
export function eventsOfRows(rows: RunEvent[]): RunEvent[] {
  return rows.flatMap(eventsOfRow);
}

/** SQL: how many events a run_events row (alias `e`) holds. */
export const EVENTS_OF_ROW_SQL = '(coalesce(e.last_seq, e.seq) - e.seq + 1)';
