// The operator's "Register a project" form: POST /projects clones the repository, so the answer can
// take a while; the button says so, and a second click waits for the first.
import { useState } from 'preact/hooks';
import { sendJson, type ApiError } from '../api/client.ts';
import type { ProjectResult, RegisterProjectBody } from '../api/types.ts';
import { ErrorBox } from './ui.tsx';

export function RegisterProject({ onRegistered }: { onRegistered: (projectId: string) => void | Promise<void> }) {
  const [gitUrl, setGitUrl] = useState('');
  const [defaultBranch, setDefaultBranch] = useState('');
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    setError(undefined);
    const body: RegisterProjectBody = {
      gitUrl: gitUrl.trim(),
      // Empty means "the remote's default branch": the server works it out.
      ...(defaultBranch.trim() ? { defaultBranch: defaultBranch.trim() } : {}),
    };
    try {
      const result = await sendJson<ProjectResult>('POST', '/projects', body);
      await onRegistered(result.project.id);
    } catch (failure) {
      setError(failure as ApiError);
      setBusy(false);
    }
  };

  return (
    <section class="card" aria-labelledby="register-title">
      <h2 id="register-title">Register a project</h2>
      <form class="stack" onSubmit={submit}>
        <div class="grid-2">
          <label>
            Git URL
            <input
              name="gitUrl"
              required
              autoComplete="off"
              spellcheck={false}
              placeholder="https://github.com/owner/repo.git"
              value={gitUrl}
              onInput={(event) => setGitUrl(event.currentTarget.value)}
            />
          </label>
          <label>
            Default branch
            <input
              name="defaultBranch"
              autoComplete="off"
              spellcheck={false}
              placeholder="the remote's default"
              value={defaultBranch}
              onInput={(event) => setDefaultBranch(event.currentTarget.value)}
            />
          </label>
        </div>
        <ErrorBox error={error} title="Not registered" />
        <div class="row">
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Cloning…' : 'Register'}
          </button>
          {busy ? <span class="muted">Cloning can take a minute for a large repository.</span> : null}
        </div>
      </form>
    </section>
  );
}
