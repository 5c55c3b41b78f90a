// Masking secrets in text shown to those who may not hold them (spectators): svc's own tokens by
// value, and the credential formats agents most often print by shape.

const MASK = '[redacted]';

/** Credential shapes, each a whole match to mask. */
const SECRET_SHAPES = [
  /-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)/g,
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

/** `scheme://user:password@host`: the password goes, the rest (useful to read) stays. */
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@"']+:)([^\s@/"']+)@/gi;

/** `token=…`, `password: …`, `Authorization: Bearer …`: the value goes. */
const LABELLED = /((?:bearer|token|password|passwd|secret|api[_-]?key|authorization)["']?\s*[:=]?\s*["']?)([^\s"',;]{8,})/gi;

/** Masks `secrets` (exact values) and every credential shape in `text`. */
export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  let result = text;
  for (const secret of secrets) if (secret.length >= 8) result = result.split(secret).join(MASK);
  for (const shape of SECRET_SHAPES) result = result.replace(shape, MASK);
  result = result.replace(URL_PASSWORD, (_match, head: string) => `${head}${MASK}@`);
  return result.replace(LABELLED, (match, label: string, value: string) => (value === MASK ? match : `${label}${MASK}`));
}
