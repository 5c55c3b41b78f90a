// Ids are `<prefix>_` + 12 chars of lowercase Crockford-style base32 (no i, l, o, u), as in the
// reference system: short, URL-safe, unambiguous when read aloud, and sortable by nothing.
import { randomBytes } from 'node:crypto';

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

const ID_PATTERN = new RegExp(`^[a-z]+_[${ID_ALPHABET}]{${ID_BODY_LENGTH}}$`);

export function isId(kind: IdKind, value: string): boolean {
  return value.startsWith(`${ID_PREFIXES[kind]}_`) && ID_PATTERN.test(value);
}
