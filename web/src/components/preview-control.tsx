// A run's preview on its page: its state (and why it failed), and for an operator the button that
// logs this browser in to it (POST /runs/{id}/preview/login sets the run's HttpOnly cookie) and
// opens it in a new tab. The cookie, never a token, is what the preview proxy checks.
import { useState } from 'preact/hooks';
import { sendJson, type ApiError } from '../api/client.ts';
import type { PreviewLogin, Run } from '../api/types.ts';
import { ErrorBox, StateBadge } from './ui.tsx';

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
