// The secrets this process knows (the operator token, forge credentials, a GitHub App's keys, the
// database password, model keys): registered once where they are read, then masked by value
// wherever text leaves svc toward someone — svc's log, the API's views, forge text entering an
// agent's prompt. The rules themselves are core/redaction.ts.
import { isDistinctiveSecret, maskSvcSecrets, redactAndCut, redactSecrets, secretForms } from '../core/redaction.ts';

/** Every registered form: svc's own log masks them all. */
const secrets = new Set<string>();
/** The distinctive ones: what the API's views and prompts mask (core/redaction.ts isDistinctiveSecret). */
const distinctive = new Set<string>();

/**
 * Registers a value that must never be shown (nor its JSON-escaped form, nor, for a multi-line
 * value such as a PEM key, any of its lines). Values shorter than 8 characters are not registered:
 * they would mask ordinary words; weak ones (`isDistinctiveSecret`) are masked in svc's log only.
 */
export function registerSecret(value: string | undefined | null): void {
  if (!value) return;
  for (const form of secretForms(value)) {
    secrets.add(form);
    if (isDistinctiveSecret(form)) distinctive.add(form);
  }
}

/** The password of a database URL, registered as a secret (the URL itself is fine to show without it). */
export function registerUrlSecret(url: string | undefined): void {
  if (!url) return;
  try {
    registerSecret(decodeURIComponent(new URL(url).password));
  } catch {
    // Not a URL (a SQLite path): nothing secret in it.
  }
}

/** Every registered value (for a caller that masks with more values of its own). */
export function knownSecrets(): ReadonlySet<string> {
  return secrets;
}

/** svc's known secrets masked by value, and its own token shapes: for svc's log. */
export function maskKnownSecrets(text: string): string {
  return maskSvcSecrets(text, secrets);
}

/** svc's distinctive secrets masked by value, and its own token shapes: for an operator's views. */
export function maskSecretsForOperator(text: string): string {
  return maskSvcSecrets(text, distinctive);
}

/**
 * svc's known secrets masked by value, and every credential shape (core/redaction.ts), the text cut
 * at 64 KiB first: for what reaches someone who holds none of svc's secrets — a spectator, or an
 * agent's prompt built from text svc did not write (PR reviews, CI logs, alerts).
 */
export function redactKnownSecrets(text: string, more: readonly string[] = []): string {
  return redactSecrets(text, more.length ? [...more, ...distinctive] : distinctive);
}

/** redactKnownSecrets, then at most `max` characters from the start or the end (the cut after the masking). */
export function redactKnownSecretsAndCut(text: string, max: number, keep: 'start' | 'end') {
  return redactAndCut(text, max, keep, distinctive);
}
