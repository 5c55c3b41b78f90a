// Ids are `<prefix>_` + 12 chars of lowercase Crockford-style base32 (no i, l, o, u), as in the
// reference system: short, URL-safe, unambiguous when read aloud, and sortable by nothing.
import { createHash, randomBytes } from 'node:crypto';

export const ID_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
export const ID_BODY_LENGTH = 12;

export const ID_PREFIXES = {
  project: 'prj',
  run: 'run',
  planRun: 'plnr',
  inboxMessage: 'msg',
  webhook: 'whk',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

export function newId(kind: IdKind): string {
  const bytes = randomBytes(ID_BODY_LENGTH);
  let body = '';
  for (const byte of bytes) body += ID_ALPHABET[byte & 31];
  return `${ID_PREFIXES[kind]}_${body}`;
}

/** An id derived from a client's idempotency key (and a scope): the same key names the same thing. */
export function idempotentId(kind: IdKind, key: string, scope = ''): string {
  const digest = createHash('sha256').update(`${scope}\0${key}`).digest();
  let body = '';
  for (let i = 0; i < ID_BODY_LENGTH; i++) body += ID_ALPHABET[digest[i]! & 31];
  return `${ID_PREFIXES[kind]}_${body}`;
}

const ID_PATTERN = new RegExp(`^[a-z]+_[${ID_ALPHABET}]{${ID_BODY_LENGTH}}$`);

export function isId(kind: IdKind, value: string): boolean {
  return value.startsWith(`${ID_PREFIXES[kind]}_`) && ID_PATTERN.test(value);
}
