// The Ops page's GitHub panel (operators): which identity svc acts with (GET /github-app), and a
// button that arms a one-time registration link (POST /github-app/registration) and opens it in
// this tab, which binds this browser to the registration (docs/guide/github.md).
import { useState } from 'preact/hooks';
import { sendJson, type ApiError } from '../api/client.ts';
import { useQuery } from '../api/cache.ts';
import type { GitHubAppRegistration, GitHubIdentity } from '../api/types.ts';
import { ErrorBox, Loading } from './ui.tsx';

export function GitHubIdentityPanel() {
  const identity = useQuery<GitHubIdentity>('/github-app');
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const register = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const armed = await sendJson<GitHubAppRegistration>('POST', '/github-app/registration');
      window.location.assign(armed.path);
    } catch (failure) {
      setError(failure as ApiError);
      setBusy(false);
    }
  };
  if (identity.error) return <ErrorBox error={identity.error} title="Could not load the GitHub identity" />;
  if (!identity.data) return <Loading lines={2} />;
  return (
    <div data-testid="github-identity">
      <p>svc acts as {identity.data.description}.</p>
      {identity.data.registration.enabled ? (
        <p>
          <button type="button" onClick={register} disabled={busy}>
            Register a GitHub App
          </button>{' '}
          <span class="muted">opens GitHub's App registration in this browser, for you alone</span>
        </p>
      ) : null}
      <ErrorBox error={error} title="Could not start the registration" />
    </div>
  );
}
