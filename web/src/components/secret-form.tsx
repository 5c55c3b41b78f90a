// The operator's "Set a secret" form: PUT /projects/{id}/secrets/{name} adds the name or replaces
// its value. The value lives in a password field and leaves the page's state once the server has it;
// names and values are checked by the server alone (its refusal and hint are shown as they come).
import { useState } from 'preact/hooks';
import { sendJson, type ApiError } from '../api/client.ts';
import type { ProjectSecret, ProjectSecretResult, PutSecretBody } from '../api/types.ts';
import { ErrorBox } from './ui.tsx';

type Scope = ProjectSecret['scope'];

export function SecretForm(props: { projectId: string; onSet: (secret: ProjectSecret) => void | Promise<void> }) {
  const [name, setName] = useState('');
  const [value, setValue] = useState('');
  const [scope, setScope] = useState<Scope>('run');
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    setError(undefined);
    const body: PutSecretBody = { value, scope };
    const path = `/projects/${encodeURIComponent(props.projectId)}/secrets/${encodeURIComponent(name.trim())}`;
    try {
      const result = await sendJson<ProjectSecretResult>('PUT', path, body);
      setName('');
      setValue('');
      await props.onSet(result.secret);
    } catch (failure) {
      setError(failure as ApiError);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card" aria-labelledby="secret-form-title">
      <h2 id="secret-form-title">Set a secret</h2>
      <form class="stack" onSubmit={submit} aria-labelledby="secret-form-title">
        <p class="muted">
          A name already set is replaced. Runs started from now on get the variable; a multi-line value (a certificate)
          is easier to set with <code>svc secrets set --value-file</code>.
        </p>
        <div class="grid-2">
          <label>
            Name
            <input
              name="name"
              required
              autoComplete="off"
              spellcheck={false}
              placeholder="NPM_TOKEN"
              class="mono"
              value={name}
              onInput={(event) => setName(event.currentTarget.value)}
            />
          </label>
          <label>
            Value
            <input
              name="value"
              type="password"
              required
              // Not a login: no password manager should offer to fill or keep it.
              autoComplete="new-password"
              spellcheck={false}
              value={value}
              onInput={(event) => setValue(event.currentTarget.value)}
            />
          </label>
        </div>
        <div class="row">
          <label>
            Scope
            <select name="scope" value={scope} onChange={(event) => setScope(event.currentTarget.value as Scope)}>
              <option value="run">run: every run of the project</option>
              <option value="setup">setup: a repository setup step</option>
            </select>
          </label>
        </div>
        <ErrorBox error={error} title="Not set" />
        <div class="row">
          <button type="submit" class="primary" disabled={busy}>
            {busy ? 'Setting…' : 'Set secret'}
          </button>
        </div>
      </form>
    </section>
  );
}
