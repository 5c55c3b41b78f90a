// Masking secrets in text that leaves svc toward someone who may not hold them: svc's own secrets
// by value (the values are handed in: platform/secrets.ts keeps the process's), and the credential
// formats agents and logs most often print by shape. Pure, so workflows' prompts may use it too.
import { idPattern } from './id-shape.ts';

export const MASK = '[redacted]';

/** Values shorter than this are never masked by value: they would mask ordinary words. */
export const MIN_SECRET_LENGTH = 8;

/** The forms a secret value takes in text: itself, JSON-escaped (a PEM in an event), and each of its lines. */
export function secretForms(value: string): string[] {
  const forms = [value, JSON.stringify(value).slice(1, -1), ...value.split('\n').map((line) => line.trim())];
  return [...new Set(forms.filter((form) => form.length >= MIN_SECRET_LENGTH))];
}

/**
 * Whether a secret's value is distinctive enough to mask outside svc's own log: masked in every
 * operator view and prompt, a weak value (`postgres`, `changeme`) would hide ordinary words.
 */
export function isDistinctiveSecret(form: string): boolean {
  return form.length >= 12 && (form.length >= 24 || /[^A-Za-z]/.test(form));
}

/** svc's own credential shapes: a run token, a webhook's signing secret. */
const SVC_SHAPES = [new RegExp(`\\bsvc1\\.${idPattern('run')}\\.[0-9a-f]{64}`, 'g'), /\bwhsec_[0-9a-f]{64}/g];

const PEM_BEGIN = /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----/;
const PEM_END = /-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----/;

/** Credential shapes, each a whole match to mask. */
const SECRET_SHAPES = [
  new RegExp(`${PEM_BEGIN.source}[\\s\\S]{0,20000}?(?:${PEM_END.source}|$)`, 'g'),
  /\bgh[pousr]_[A-Za-z0-9]{16,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bglpat-[A-Za-z0-9_-]{16,}/g,
  /\bsk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{8,}/g,
  /\bxox[abposr]-[A-Za-z0-9-]{8,}/g,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
  /\bAIza[0-9A-Za-z_-]{35}/g,
  ...SVC_SHAPES,
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
];

/**
 * `scheme://user:password@host`: the password goes, the rest (useful to read) stays. Every
 * repetition is bounded: agents print whatever they like, and a spectator's read must stay linear.
 */
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]{0,30}:\/\/[^\s:/@"']{1,256}:)([^\s@/"']{1,256})@/gi;

/** `token=…`, `password: …`, `Authorization: Bearer …`: the value goes. */
const LABELLED =
  /((?:bearer|token|password|passwd|secret|api[_-]?key|authorization)["']?\s{0,8}[:=]?\s{0,8}["']?)([^\s"',;]{8,})/gi;

/**
 * `pass=…`, `DB_PASS: …`, `pwd=…`, `credentials=…`: shorter labels, so only with an explicit `=` or
 * `:` and not inside a longer word (`bypass`, `compass`); the value goes from 6 characters on.
 */
const SECRET_NAMES = /pass|pwd|passphrase|credentials?|private[_-]?key|access[_-]?key|client[_-]?secret|auth/;
const ASSIGNED = new RegExp(
  `((?<![A-Za-z])(?:${SECRET_NAMES.source})["']?\\s{0,8}[:=]\\s{0,8}["']?)([^\\s"',;]{6,})`,
  'gi',
);

/**
 * A long blob of base64 with both letter cases and a digit (a key's body, a bare API key). A hex
 * digest (a commit id) has one case and stays readable.
 */
const KEY_MATERIAL = /[A-Za-z0-9+/_-]{40,}={0,2}/g;
const looksLikeKeyMaterial = (blob: string) => /[A-Z]/.test(blob) && /[a-z]/.test(blob) && /[0-9]/.test(blob);

/** Text longer than this is cut before masking: what a spectator reads is bounded work. */
export const MAX_REDACTED_TEXT = 64 * 1024;
/** How much past a cut is masked with it: a private key's whole block (an RSA-4096 PEM is ~3.3 KiB). */
const CUT_MARGIN = 8 * 1024;

/** Masks each of `secrets` (exact values; shorter than MIN_SECRET_LENGTH: left) wherever it appears. */
export function maskValues(text: string, secrets: Iterable<string>): string {
  let result = text;
  for (const secret of secrets)
    if (secret.length >= MIN_SECRET_LENGTH && result.includes(secret)) result = result.split(secret).join(MASK);
  return result;
}

/**
 * Masks `secrets` by value and svc's own credential shapes (run tokens, webhook secrets): what an
 * operator's views and svc's log need, with what agents print otherwise left readable.
 */
export function maskSvcSecrets(text: string, secrets: Iterable<string> = []): string {
  let result = maskValues(text, secrets);
  for (const shape of SVC_SHAPES) result = result.replace(shape, MASK);
  return result;
}

/**
 * Masks `secrets` (exact values) and every credential shape in `text`, then cuts it to
 * MAX_REDACTED_TEXT: masked before the cut, so a secret the cut would split is masked whole.
 */
export function redactSecrets(text: string, secrets: Iterable<string> = []): string {
  if (text.length <= MAX_REDACTED_TEXT) return redactWhole(text, secrets);
  return `${redactWhole(text.slice(0, MAX_REDACTED_TEXT + CUT_MARGIN), secrets).slice(0, MAX_REDACTED_TEXT)}[… cut]`;
}

/**
 * Masks, then keeps at most `max` characters of `text`, from its start or its end: the cut comes
 * after the masking, so no secret is cut into a piece that no rule recognises.
 */
export function redactAndCut(
  text: string,
  max: number,
  keep: 'start' | 'end',
  secrets: Iterable<string> = [],
): { text: string; cut: boolean } {
  if (text.length <= max) return { text: redactSecrets(text, secrets), cut: false };
  const part = keep === 'start' ? text.slice(0, max + CUT_MARGIN) : text.slice(-(max + CUT_MARGIN));
  const masked = redactSecrets(part, secrets);
  return { text: keep === 'start' ? masked.slice(0, max) : masked.slice(-max), cut: true };
}

function redactWhole(text: string, secrets: Iterable<string>): string {
  let result = maskValues(text, secrets);
  for (const shape of SECRET_SHAPES) result = result.replace(shape, MASK);
  result = result.replace(URL_PASSWORD, (_match, head: string) => `${head}${MASK}@`);
  result = result.replace(KEY_MATERIAL, (blob) => (looksLikeKeyMaterial(blob) ? MASK : blob));
  const keepLabel = (match: string, label: string, value: string) => (value === MASK ? match : `${label}${MASK}`);
  return result.replace(LABELLED, keepLabel).replace(ASSIGNED, keepLabel);
}
