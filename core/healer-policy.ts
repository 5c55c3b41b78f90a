// The healer's memory of one alert fingerprint in one project, and the rule that decides whether an
// alert dispatches a healer run: at most 1 + maxRetries runs, at least cooldownMinutes apart. Pure,
// so the healer workflow (which keeps the memory durably) and its tests share it.

export interface HealAlertRequest {
  /** The prompt a new attempt's run gets (kept, so a re-offered attempt repeats the same request). */
  prompt: string;
  cooldownMinutes: number;
  maxRetries: number;
}

export type HealDecision =
  | { decision: 'dispatch'; attempt: number; prompt: string }
  | { decision: 'skip'; reason: 'cooldown' | 'max_retries'; runId: string | null };

export interface HealAttempt {
  attempt: number;
  prompt: string;
  /** When the attempt was offered (workflow time, ms). */
  offeredAt: number;
  /** Set once the API reports the run dispatched; null while the dispatch is in flight. */
  runId: string | null;
}

/**
 * An attempt still unconfirmed this long after it was offered is offered again: the API that took
 * it died before dispatching. Its run id is derived from the attempt, so a dispatch that did happen
 * is found, not repeated.
 */
export const UNCONFIRMED_ATTEMPT_GRACE_MS = 60_000;

/** How long a fingerprint is remembered after its last alert, at least (longer when the cooldown is). */
export const HEALER_MEMORY_MS = 7 * 24 * 3600_000;

/** The decision for an alert, and the memory after it (a new or re-offered attempt). */
export function decideHeal(
  attempts: readonly HealAttempt[],
  request: HealAlertRequest,
  now: number,
): { decision: HealDecision; attempts: HealAttempt[] } {
  const pending = attempts.find((entry) => entry.runId === null);
  const confirmed = attempts.filter((entry) => entry.runId !== null);
  const last = confirmed.at(-1);
  const skip = (reason: 'cooldown' | 'max_retries') => ({
    decision: { decision: 'skip' as const, reason, runId: last?.runId ?? null },
    attempts: [...attempts],
  });
  if (pending) {
    if (now - pending.offeredAt < UNCONFIRMED_ATTEMPT_GRACE_MS) return skip('cooldown');
    const reoffered = { ...pending, offeredAt: now };
    return {
      decision: { decision: 'dispatch', attempt: pending.attempt, prompt: pending.prompt },
      attempts: attempts.map((entry) => (entry === pending ? reoffered : entry)),
    };
  }
  if (confirmed.length >= 1 + request.maxRetries) return skip('max_retries');
  if (last && now - last.offeredAt < request.cooldownMinutes * 60_000) return skip('cooldown');
  const attempt = Math.max(0, ...attempts.map((entry) => entry.attempt)) + 1;
  return {
    decision: { decision: 'dispatch', attempt, prompt: request.prompt },
    attempts: [...attempts, { attempt, prompt: request.prompt, offeredAt: now, runId: null }],
  };
}
