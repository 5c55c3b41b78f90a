// A project's healer memory, and the rule that decides whether an alert dispatches a healer run.
// Per fingerprint: at most 1 + maxRetries runs, at least cooldownMinutes apart. Per project: at
// least projectCooldownMinutes between any two runs, and at most maxConcurrentRuns unfinished at
// once, so many fingerprints (or fingerprints an alert's text chose) cannot multiply runs. Pure, so
// the healer workflow (which keeps the memory durably, one per project) and its tests share it.

export interface HealAlertRequest {
  /** The memory key: the alert's fingerprint, or one per source for fingerprints svc cannot trust. */
  fingerprint: string;
  /** The prompt a new attempt's run gets (kept, so a re-offered attempt repeats the same request). */
  prompt: string;
  cooldownMinutes: number;
  maxRetries: number;
  projectCooldownMinutes: number;
  maxConcurrentRuns: number;
  /**
   * Runs of earlier attempts the read model shows finished. Finished is for good, so a stale list
   * only holds more runs back, never fewer.
   */
  finishedRunIds: string[];
}

export type HealSkip = 'cooldown' | 'max_retries' | 'busy';

export type HealDecision =
  /** key: the attempt's run's idempotency key, unique per memory and attempt. */
  | { decision: 'dispatch'; attempt: number; prompt: string; key: string }
  | { decision: 'skip'; reason: HealSkip; runId: string | null };

export interface HealAttempt {
  /** Numbered per project memory; with the memory's id it names the attempt's run. */
  attempt: number;
  fingerprint: string;
  prompt: string;
  /** When the attempt was offered (workflow time, ms). */
  offeredAt: number;
  /** Set once the API reports the run dispatched; null while the dispatch is in flight. */
  runId: string | null;
  /** Set once the read model shows the run finished: it no longer counts against maxConcurrentRuns. */
  finished: boolean;
}

/** What a project's healer workflow remembers (carried over by continue-as-new). */
export interface HealerMemoryState {
  attempts: HealAttempt[];
  /** The last alert of each fingerprint that has attempts (workflow time, ms). */
  lastAlertAt: Record<string, number>;
  /** The last attempt number given: never reused, even once its fingerprint is forgotten. */
  lastAttempt: number;
}

export const EMPTY_HEALER_MEMORY: HealerMemoryState = { attempts: [], lastAlertAt: {}, lastAttempt: 0 };

/**
 * An attempt still unconfirmed this long after it was offered is offered again: the API that took
 * it died before dispatching. Its run id is derived from the attempt, so a dispatch that did happen
 * is found, not repeated.
 */
export const UNCONFIRMED_ATTEMPT_GRACE_MS = 60_000;

/** How long a fingerprint is remembered after its last alert, at least (longer when the cooldown is). */
export const HEALER_MEMORY_MS = 7 * 24 * 3600_000;

/** Forgets the fingerprints unheard for their memory time whose runs are all finished. */
function forget(memory: HealerMemoryState, cooldownMs: number, now: number): HealerMemoryState {
  const keep = (fingerprint: string) =>
    now - (memory.lastAlertAt[fingerprint] ?? 0) < Math.max(HEALER_MEMORY_MS, cooldownMs) ||
    memory.attempts.some((entry) => entry.fingerprint === fingerprint && !entry.finished);
  const attempts = memory.attempts.filter((entry) => keep(entry.fingerprint));
  const lastAlertAt = Object.fromEntries(Object.entries(memory.lastAlertAt).filter(([key]) => keep(key)));
  return { attempts, lastAlertAt, lastAttempt: memory.lastAttempt };
}

/**
 * The decision for an alert, and the memory after it (a new or re-offered attempt, runs marked
 * finished). memoryId names this memory for good (the workflow's first run id), so an attempt's
 * key is never reused by a later memory of the same project.
 */
export function decideHeal(
  before: HealerMemoryState,
  request: HealAlertRequest,
  now: number,
  memoryId: string,
): { decision: HealDecision; memory: HealerMemoryState } {
  const finished = new Set(request.finishedRunIds);
  const marked = before.attempts.map((entry) =>
    entry.runId !== null && !entry.finished && finished.has(entry.runId) ? { ...entry, finished: true } : entry,
  );
  const known = forget({ ...before, attempts: marked }, request.cooldownMinutes * 60_000, now);
  const attempts = known.attempts;
  const own = attempts.filter((entry) => entry.fingerprint === request.fingerprint);
  const heard = { ...known.lastAlertAt, ...(own.length ? { [request.fingerprint]: now } : {}) };
  const pending = own.find((entry) => entry.runId === null);
  const last = own.filter((entry) => entry.runId !== null).at(-1);
  const skip = (reason: HealSkip) => ({
    decision: { decision: 'skip' as const, reason, runId: last?.runId ?? null },
    memory: { attempts, lastAlertAt: heard, lastAttempt: known.lastAttempt },
  });
  if (pending) {
    if (now - pending.offeredAt < UNCONFIRMED_ATTEMPT_GRACE_MS) return skip('cooldown');
    const reoffered = { ...pending, offeredAt: now };
    return {
      decision: {
        decision: 'dispatch',
        attempt: pending.attempt,
        prompt: pending.prompt,
        key: `${memoryId}:${pending.attempt}`,
      },
      memory: {
        attempts: attempts.map((entry) => (entry === pending ? reoffered : entry)),
        lastAlertAt: heard,
        lastAttempt: known.lastAttempt,
      },
    };
  }
  if (own.length >= 1 + request.maxRetries) return skip('max_retries');
  if (last && now - last.offeredAt < request.cooldownMinutes * 60_000) return skip('cooldown');
  const latest = Math.max(-Infinity, ...attempts.map((entry) => entry.offeredAt));
  if (now - latest < request.projectCooldownMinutes * 60_000) return skip('cooldown');
  if (attempts.filter((entry) => !entry.finished).length >= request.maxConcurrentRuns) return skip('busy');
  const attempt = known.lastAttempt + 1;
  const offered: HealAttempt = {
    attempt,
    fingerprint: request.fingerprint,
    prompt: request.prompt,
    offeredAt: now,
    runId: null,
    finished: false,
  };
  return {
    decision: { decision: 'dispatch', attempt, prompt: request.prompt, key: `${memoryId}:${attempt}` },
    memory: {
      attempts: [...attempts, offered],
      lastAlertAt: { ...heard, [request.fingerprint]: now },
      lastAttempt: attempt,
    },
  };
}

/** The runs of confirmed attempts not yet known finished: the API asks the read model about them. */
export function unfinishedRuns(memory: HealerMemoryState): string[] {
  return memory.attempts.flatMap((entry) => (entry.runId !== null && !entry.finished ? [entry.runId] : []));
}
