// A run's preview on its page: its state (and why it failed), and for an operator the button that
// logs this browser in to it (POST /runs/{id}/preview/login sets the run's HttpOnly cookie) and
// opens it in a new tab. The cookie, never a token, is what the preview proxy checks.
import { useEffect, useRef, useState } from 'preact/hooks';
import { sendJson, type ApiError } from '../api/client.ts';
import type { PreviewLogin, Run } from '../api/types.ts';
import { ErrorBox, StateBadge } from './ui.tsx';

/**
 * How often to re-read a run whose preview may still change, or null; `sinceEnd` is how long this
 * page has known the run ended (its own clock, not the server's). A preview comes after the run's
 * end, where the page no longer follows its events: it starts within moments of a successful run
 * with an open PR (no preview by then: none is coming), goes live or fails, and is torn down later.
 */
export function previewRereadMs(run: Run, sinceEnd: number): number | null {
  if (run.state === 'queued' || run.state === 'running') return null;
  // A preview's setup may take minutes; one starting for long is read less often.
  if (run.previewState === 'starting') return sinceEnd < 600_000 ? 2000 : 15_000;
  if (run.previewState === 'live') return 15_000;
  const mayStart = run.previewState === null && run.state === 'succeeded' && run.prState === 'open';
  return mayStart && sinceEnd < 30_000 ? 3000 : null;
}

/** Re-reads the run (`reload`) while its preview may change. */
export function usePreviewFollow(run: Run | undefined, reload: () => unknown): void {
  const latest = useRef({ run, reload });
  latest.current = { run, reload };
  const endSeen = useRef<number | null>(null);
  const ended = run !== undefined && run.state !== 'queued' && run.state !== 'running';
  if (ended) endSeen.current ??= Date.now();
  const following = run !== undefined && ended && previewRereadMs(run, Date.now() - endSeen.current!) !== null;
  useEffect(() => {
    if (!following) return;
    let lastRead = Date.now();
    // A tick a second; each re-read waits as long as the preview's state asks now.
    const timer = setInterval(() => {
      const { run: current, reload: reread } = latest.current;
      const wait = current ? previewRereadMs(current, Date.now() - (endSeen.current ?? Date.now())) : null;
      if (wait === null || Date.now() - lastRead < wait) return;
      lastRead = Date.now();
      void reread();
    }, 1000);
    return () => clearInterval(timer);
  }, [following]);
}

export function PreviewFact({ run }: { run: Run }) {
  if (!run.previewState) return <span>—</span>;
  return (
    <span data-testid="preview-state">
      <StateBadge state={run.previewState} />
      {run.previewFailureMessage ? <span class="muted"> {run.previewFailureMessage}</span> : null}
    </span>
  );
}

export function OpenPreview({ runId }: { runId: string }) {
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const open = async () => {
    setBusy(true);
    setError(undefined);
    try {
      // The answer's Set-Cookie is the login: this one request keeps cookies.
      const path = `/runs/${encodeURIComponent(runId)}/preview/login`;
      const { url } = await sendJson<PreviewLogin>('POST', path, {}, {}, true);
      window.open(url, '_blank', 'noopener');
    } catch (failure) {
      setError(failure as ApiError);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" onClick={open} disabled={busy}>
        Open preview
      </button>
      <ErrorBox error={error} title="The preview did not open" />
    </>
  );
}
