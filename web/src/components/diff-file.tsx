// One file of a run's diff: its header (status, path or rename, counts) and its patch in the unified
// or the split view, syntax-coloured; a binary file or a patch over the limits says so instead.
// Big files start collapsed.
import type { RunDiffFile } from '../api/types.ts';
import { parsePatch, splitRows, type DiffLine } from '../diff/hunks.ts';
import { languageOf, tokenize } from '../diff/syntax.ts';

export type DiffMode = 'unified' | 'split';

/** Lines past which a file starts collapsed. */
const BIG_FILE_LINES = 400;

function Code({ line, language }: { line: DiffLine; language: string | undefined }) {
  return (
    <>
      {tokenize(line.text, language).map((token, index) =>
        token.kind === 'plain' ? (
          token.text
        ) : (
          <span key={index} class={`tok-${token.kind}`}>
            {token.text}
          </span>
        ),
      )}
    </>
  );
}

function Unified({ lines, language }: { lines: DiffLine[]; language: string | undefined }) {
  return (
    <table class="diff-table unified">
      <colgroup>
        <col class="ln-col" />
        <col class="ln-col" />
        <col />
      </colgroup>
      <tbody>
        {lines.map((line, index) =>
          line.kind === 'hunk' || line.kind === 'note' ? (
            <tr key={index} class={`diff-${line.kind}`}>
              <td colSpan={3}>{line.text}</td>
            </tr>
          ) : (
            <tr key={index} class={`diff-${line.kind}`}>
              <td class="ln">{line.old ?? ''}</td>
              <td class="ln">{line.new ?? ''}</td>
              <td class="code">
                <span class="sign">{line.kind === 'add' ? '+' : line.kind === 'del' ? '−' : ' '}</span>
                <Code line={line} language={language} />
              </td>
            </tr>
          ),
        )}
      </tbody>
    </table>
  );
}

const Side = ({ number }: { number: number | undefined }) => <td class="ln">{number ?? ''}</td>;

function Split({ lines, language }: { lines: DiffLine[]; language: string | undefined }) {
  return (
    <table class="diff-table split">
      <colgroup>
        <col class="ln-col" />
        <col />
        <col class="ln-col" />
        <col />
      </colgroup>
      <tbody>
        {splitRows(lines).map((row, index) =>
          row.across ? (
            <tr key={index} class={`diff-${row.across.kind}`}>
              <td colSpan={4}>{row.across.text}</td>
            </tr>
          ) : (
            <tr key={index}>
              <Side number={row.left?.old} />
              <td class={`code diff-${row.left?.kind ?? 'empty'}`}>
                {row.left ? <Code line={row.left} language={language} /> : null}
              </td>
              <Side number={row.right?.new} />
              <td class={`code diff-${row.right?.kind ?? 'empty'}`}>
                {row.right ? <Code line={row.right} language={language} /> : null}
              </td>
            </tr>
          ),
        )}
      </tbody>
    </table>
  );
}

const STATUS_MARK = { added: 'A', modified: 'M', deleted: 'D', renamed: 'R' } as const;

export function fileAnchor(path: string): string {
  return `diff-${path.replace(/[^A-Za-z0-9]+/g, '-')}`;
}

export function DiffFile({ file, mode }: { file: RunDiffFile; mode: DiffMode }) {
  const lines = file.patch ? parsePatch(file.patch) : [];
  const language = languageOf(file.path);
  const big = lines.length > BIG_FILE_LINES;
  return (
    <details class="diff-file" id={fileAnchor(file.path)} data-path={file.path} data-status={file.status} open={!big}>
      <summary>
        <span class={`diff-status diff-status-${file.status}`} title={file.status}>
          {STATUS_MARK[file.status]}
        </span>
        <span class="mono path">
          {file.oldPath ? (
            <>
              <span class="muted">{file.oldPath}</span> → {file.path}
            </>
          ) : (
            file.path
          )}
        </span>
        <span class="counts">
          <span class="added">+{file.additions}</span> <span class="removed">−{file.deletions}</span>
        </span>
        {big ? <span class="muted">large: {lines.length} lines</span> : null}
      </summary>
      {file.binary ? (
        <p class="diff-note">Binary file: not shown.</p>
      ) : file.patch === undefined ? (
        <p class="diff-note">Patch not shown: it is over the diff limits.</p>
      ) : file.patch === '' ? (
        <p class="diff-note">{file.status === 'renamed' ? 'Renamed without changes.' : 'No content change.'}</p>
      ) : mode === 'split' ? (
        <Split lines={lines} language={language} />
      ) : (
        <Unified lines={lines} language={language} />
      )}
    </details>
  );
}
