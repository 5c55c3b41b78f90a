// A run's whole log as a text file (GET /runs/{id}/log). Fetched with the token in its header,
// then handed to the browser as a file: a plain link would carry no credential.
import { useState } from 'preact/hooks';
import { getBlob, type ApiError } from '../api/client.ts';

export function LogDownload(props: { path: string }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const download = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const url = URL.createObjectURL(await getBlob(props.path));
      const link = document.createElement('a');
      link.href = url;
      link.download = `${decodeURIComponent(props.path.split('/')[2] ?? 'run')}.log`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    } catch (failure) {
      setError((failure as ApiError).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="tail-actions">
      <button type="button" class="button" disabled={busy} onClick={() => void download()}>
        {busy ? 'Preparing…' : 'Download log'}
      </button>
      {error ? <span class="error-text">{error}</span> : null}
    </div>
  );
}
