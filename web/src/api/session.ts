// Who this tab is: the operator token kept in localStorage (the key GET /setup writes), or nobody.
// Every tab of the browser shares it; signing out in one signs out all.
import { signal } from '@preact/signals';

export const TOKEN_KEY = 'svc.apiToken';

function readToken(): string | null {
  try {
    return localStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

/** The operator token, or null (a spectator, or a visitor who must sign in). */
export const token = signal<string | null>(readToken());

export function signIn(value: string): void {
  localStorage.setItem(TOKEN_KEY, value.trim());
  token.value = value.trim();
}

export function signOut(): void {
  localStorage.removeItem(TOKEN_KEY);
  token.value = null;
}

// Another tab signed in or out.
window.addEventListener('storage', (event) => {
  if (event.key === TOKEN_KEY) token.value = event.newValue;
});
