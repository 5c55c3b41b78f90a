// The run page's diff: the files the run's branch changes (GET /runs/{id}/diff) and each one's patch,
// unified or split. Read again when the run's change moves (a new commit counted, the run ending)
// and on demand while it goes on. The section is the page's #diff anchor (plan-run pages link to it).
import { useEffect, useRef, useState } from 'preact/hooks';
import { useQuery } from '../api/cache.ts';
import type { RunDiff } from '../api/types.ts';
import { DiffFile, fileAnchor, type DiffMode } from './diff-file.tsx';
import { ErrorBox, Loading } from './ui.tsx';

const MODE_KEY = 'svc.diffMode';

function savedMode(): DiffMode {
  try {
    return localStorage.getItem(MODE_KEY) === 'split' ? 'split' : 'unified';
  } catch {
    return 'unified';
  }
}

/** `version` changes when the run's change may have: the diff is read again then. */
export function RunDiffCard({ runId, version, active }: { runId: string; version: string; active: boolean }) {
  const diff = useQuery<RunDiff>(`/runs/${encodeURIComponent(runId)}/diff`);
  const [mode, setMode] = useState<DiffMode>(savedMode);
  const section = useRef<HTMLElement>(null);
  const seen = useRef(version);
  useEffect(() => {
    if (seen.current === version) return;
    seen.current = version;
    void diff.reload();
  }, [version]);
  const loaded = diff.data !== undefined || diff.error !== undefined;
  useEffect(() => {
    // The browser scrolled to #diff before the section existed: go there once it has content.
    if (loaded && location.hash === '#diff') section.current?.scrollIntoView();
  }, [loaded]);
  const choose = (next: DiffMode) => {
    setMode(next);
    try {
      localStorage.setItem(MODE_KEY, next);
    } catch {
      // Storage refused (private mode): the choice lasts for this page only.
    }
  };
  const none = diff.error?.code === 'run_has_no_change';
  return (
    <section class="card run-diff" id="diff" ref={section} aria-labelledby="diff-title" data-testid="run-diff">
      <header class="run-diff-head">
        <h2 id="diff-title">Diff</h2>
        {diff.data ? (
          <span class="muted mono" title="base … head">
            {diff.data.baseCommit.slice(0, 8)}…{diff.data.headCommit.slice(0, 8)} ({diff.data.source})
          </span>
        ) : null}
        <span class="spacer" />
        <div class="segmented" role="group" aria-label="Diff view">
          {(['unified', 'split'] as const).map((option) => (
            <button type="button" key={option} aria-pressed={mode === option} onClick={() => choose(option)}>
              {option === 'unified' ? 'Unified' : 'Split'}
            </button>
          ))}
        </div>
        {active ? (
          <button type="button" onClick={() => void diff.reload()}>
            Refresh
          </button>
        ) : null}
      </header>
      {none ? (
        <p class="muted" data-testid="diff-none" title={diff.error!.message}>
          {active
            ? 'No change yet: the diff shows what the agent has committed, once it has.'
            : 'No change: this run left nothing to push or salvage.'}
        </p>
      ) : diff.error ? (
        <ErrorBox error={diff.error} title="The diff cannot be read" />
      ) : !diff.data ? (
        <Loading lines={4} />
      ) : (
        <>
          {diff.data.truncated ? (
            <p class="notice" data-testid="diff-truncated">
              Cut to the diff limits: some files or patches are left out (svc runs diff shows the same).
            </p>
          ) : null}
          <ul class="diff-list" data-testid="diff-files">
            {diff.data.files.map((file) => (
              <li key={file.path} data-status={file.status}>
                <a href={`#${fileAnchor(file.path)}`} class="mono">
                  {file.oldPath ? `${file.oldPath} → ${file.path}` : file.path}
                </a>{' '}
                <span class="added">+{file.additions}</span> <span class="removed">−{file.deletions}</span>
                {file.binary ? <span class="muted"> binary</span> : null}
              </li>
            ))}
          </ul>
          {diff.data.files.map((file) => (
            <DiffFile key={`${mode}:${file.path}`} file={file} mode={mode} />
          ))}
        </>
      )}
    </section>
  );
}
