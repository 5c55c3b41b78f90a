// Whether the server can do its work (GET /readyz: its database and Temporal answer), apart from
// whether this tab's stream is connected (lifecycle.ts). Polled cheaply: every 10 s while the tab
// is visible, and at once when the stream reconnects.
import { signal } from '@preact/signals';

/** null while ready (or not yet asked); else what the server said is wrong. */
export const notReady = signal<string | null>(null);

export const READINESS_POLL_MS = 10_000;

export async function checkReadiness(): Promise<void> {
  try {
    const response = await fetch('/readyz', { headers: { accept: 'application/json' } });
    if (response.ok) {
      notReady.value = null;
      return;
    }
    const body = (await response.json().catch(() => undefined)) as { error?: { message?: string } } | undefined;
    notReady.value = body?.error?.message ?? `GET /readyz answered HTTP ${response.status}`;
  } catch {
    // No answer at all: the stream's own state says so.
  }
}

/** Starts watching readiness; answers a stop function. */
export function watchReadiness(): () => void {
  const poll = () => {
    if (document.visibilityState === 'visible') void checkReadiness();
  };
  poll();
  const timer = setInterval(poll, READINESS_POLL_MS);
  document.addEventListener('visibilitychange', poll);
  return () => {
    clearInterval(timer);
    document.removeEventListener('visibilitychange', poll);
  };
}
