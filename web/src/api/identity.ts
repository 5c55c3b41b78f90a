// Who the server says this tab is (GET /whoami), re-asked whenever the token changes.
import { effect, signal } from '@preact/signals';
import { type ApiError, getJson } from './client.ts';
import { clearCache } from './cache.ts';
import { token } from './session.ts';
import type { Whoami } from './types.ts';

export type Identity =
  | { kind: 'loading' }
  /** The operator: every page and action. */
  | { kind: 'operator'; capabilities: string[] }
  /** Public mode without a token: the redacted public views, kept fresh by polling. */
  | { kind: 'spectator' }
  /** The server wants a token: none is stored, or the stored one was refused. */
  | { kind: 'signed-out'; refused: boolean }
  | { kind: 'unreachable'; error: ApiError };

export const identity = signal<Identity>({ kind: 'loading' });

async function ask(current: string | null): Promise<Identity> {
  try {
    const who = await getJson<Whoami>('/whoami');
    if (who.identity === 'operator') return { kind: 'operator', capabilities: who.capabilities };
    if (who.identity === 'anonymous' && !current) return { kind: 'spectator' };
    return { kind: 'signed-out', refused: true };
  } catch (error) {
    const failure = error as ApiError;
    if (failure.status === 401 || failure.status === 403) return { kind: 'signed-out', refused: Boolean(current) };
    return { kind: 'unreachable', error: failure };
  }
}

/** Starts following the token: every change re-asks the server and empties the cache. */
export function followIdentity(): void {
  effect(() => {
    const current = token.value;
    identity.value = { kind: 'loading' };
    void ask(current).then((answer) => {
      if (token.peek() !== current) return;
      clearCache();
      identity.value = answer;
    });
  });
}

export function isOperator(who: Identity): boolean {
  return who.kind === 'operator';
}
