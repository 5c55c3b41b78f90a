// A run paused at its cost cap (onCapHit: pause, docs/runs.md): why it waits, and for an operator
// a new cap to resume it with (POST /runs/{id}/resume). Cancelling it is the page's Cancel button.
import { useState } from 'preact/hooks';
import { sendJson, type ApiError } from '../api/client.ts';
import type { RunDetail } from '../api/types.ts';
import { money } from '../format.ts';
import { ErrorBox } from './ui.tsx';

export function PausedNotice(props: { run: RunDetail['run']; operator: boolean; onResumed: () => unknown }) {
  const { run, operator, onResumed } = props;
  const spent = run.costUsd ?? 0;
  // A sensible first offer: double what it spent, in whole cents.
  const [cap, setCap] = useState(String(Math.max(1, Math.ceil(spent * 200) / 100)));
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const resume = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await sendJson('POST', `/runs/${encodeURIComponent(run.id)}/resume`, { maxCostUsd: Number(cap) });
      await onResumed();
    } catch (failure) {
      setError(failure as ApiError);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="notice" data-testid="run-paused">
      <p>
        <strong>Paused:</strong> {run.pausedReason} It has spent {money(spent)}; its workspace is kept.
      </p>
      {operator ? (
        <form class="row" onSubmit={resume}>
          <label>
            New cap (USD){' '}
            <input
              type="number"
              min={spent}
              step="0.01"
              value={cap}
              required
              onInput={(event) => setCap(event.currentTarget.value)}
            />
          </label>
          <button type="submit" disabled={busy}>
            Raise the cap and resume
          </button>
        </form>
      ) : null}
      <ErrorBox error={error} title="Not resumed" />
    </div>
  );
}
