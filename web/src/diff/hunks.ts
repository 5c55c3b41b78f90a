// A file's patch (its hunks, as GET /runs/{id}/diff gives it) as numbered lines for the unified
// view, and as side-by-side rows for the split view (a run of removals paired with the additions
// that follow it).

export type LineKind = 'hunk' | 'context' | 'add' | 'del' | 'note';
export interface DiffLine {
  kind: LineKind;
  text: string;
  /** Line numbers in the old and the new file (a removal has only old, an addition only new). */
  old?: number;
  new?: number;
}

export function parsePatch(patch: string): DiffLine[] {
  const lines: DiffLine[] = [];
  let old = 0;
  let next = 0;
  for (const raw of patch.replace(/\n$/, '').split('\n')) {
    const header = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(raw);
    if (header) {
      old = Number(header[1]);
      next = Number(header[2]);
      lines.push({ kind: 'hunk', text: raw });
    } else if (raw.startsWith('+')) lines.push({ kind: 'add', text: raw.slice(1), new: next++ });
    else if (raw.startsWith('-')) lines.push({ kind: 'del', text: raw.slice(1), old: old++ });
    else if (raw.startsWith('\\')) lines.push({ kind: 'note', text: raw });
    else lines.push({ kind: 'context', text: raw.slice(1), old: old++, new: next++ });
  }
  return lines;
}

export interface SplitRow {
  left?: DiffLine;
  right?: DiffLine;
  /** A hunk header or a note across both sides. */
  across?: DiffLine;
}

export function splitRows(lines: DiffLine[]): SplitRow[] {
  const rows: SplitRow[] = [];
  let removed: DiffLine[] = [];
  let added: DiffLine[] = [];
  const flush = () => {
    for (let index = 0; index < Math.max(removed.length, added.length); index++)
      rows.push({ left: removed[index], right: added[index] });
    removed = [];
    added = [];
  };
  for (const line of lines) {
    if (line.kind === 'del') {
      if (added.length) flush();
      removed.push(line);
    } else if (line.kind === 'add') added.push(line);
    else {
      flush();
      if (line.kind === 'context') rows.push({ left: line, right: line });
      else rows.push({ across: line });
    }
  }
  flush();
  return rows;
}
