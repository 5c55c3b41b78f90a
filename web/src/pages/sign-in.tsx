// Signing in: the link `svc serve` prints does it in one click (GET /setup stores the token); the
// operator token can also be pasted. The token stays in this browser's localStorage only.
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { signIn } from '../api/session.ts';
import { PageHeader } from '../components/ui.tsx';

export function SignInPage({ refused = false }: { refused?: boolean }) {
  const [value, setValue] = useState('');
  const { route, path } = useLocation();
  const submit = (event: Event) => {
    event.preventDefault();
    if (!value.trim()) return;
    signIn(value);
    if (path === '/ui/sign-in') route('/ui/runs');
  };
  return (
    <section class="narrow">
      <PageHeader title="Sign in" />
      {refused ? (
        <p class="error-box" role="alert">
          The stored token was refused: it may have been rotated. Paste the current one.
        </p>
      ) : null}
      <p>
        <code>svc serve</code> prints a one-time sign-in link: open it in this browser. Or paste the operator token (
        <code>svc serve</code> prints where it is kept, e.g. <code>.svc-data/operator-token</code>).
      </p>
      <form class="stack" onSubmit={submit}>
        <label for="token">Operator token</label>
        <input
          id="token"
          name="token"
          type="password"
          autoComplete="current-password"
          required
          value={value}
          onInput={(event) => setValue(event.currentTarget.value)}
        />
        <button type="submit" class="primary">
          Sign in
        </button>
      </form>
      <p class="muted">The token stays in this browser (localStorage) and is sent only to this server, in a header.</p>
    </section>
  );
}
