// Masking secrets in text shown to those who may not hold them (spectators): svc's own tokens by
// value, and the credential formats agents most often print by shape.

const MASK = '[redacted]';

/** Credential shapes, each a whole match to mask. */
const SECRET_SHAPES = [
  /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----[\s\S]{0,20000}?(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|$)/g,
  /\bgh[pousr]_[A-Za-z0-9]{16,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\bglpat-[A-Za-z0-9_-]{16,}/g,
  /\bsk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{8,}/g,
  /\bxox[abposr]-[A-Za-z0-9-]{8,}/g,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
  /\bAIza[0-9A-Za-z_-]{35}/g,
  /\bsvc1\.run_[0-9a-z]{12}\.[0-9a-f]{64}/g,
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
 * A long blob of base64 with both letter cases and a digit (a key's body, a bare API key). A hex
 * digest (a commit id) has one case and stays readable.
 */
const KEY_MATERIAL = /[A-Za-z0-9+/_-]{40,}={0,2}/g;
const looksLikeKeyMaterial = (blob: string) => /[A-Z]/.test(blob) && /[a-z]/.test(blob) && /[0-9]/.test(blob);

/** Text longer than this is cut before masking: what a spectator reads is bounded work. */
export const MAX_REDACTED_TEXT = 64 * 1024;

/** Masks `secrets` (exact values) and every credential shape in `text`. */
export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  let result = text.length > MAX_REDACTED_TEXT ? `${text.slice(0, MAX_REDACTED_TEXT)}[… cut for spectators]` : text;
  for (const secret of secrets) if (secret.length >= 8) result = result.split(secret).join(MASK);
  for (const shape of SECRET_SHAPES) result = result.replace(shape, MASK);
  result = result.replace(URL_PASSWORD, (_match, head: string) => `${head}${MASK}@`);
  result = result.replace(KEY_MATERIAL, (blob) => (looksLikeKeyMaterial(blob) ? MASK : blob));
  return result.replace(LABELLED, (match, label: string, value: string) =>
    value === MASK ? match : `${label}${MASK}`,
  );
}
