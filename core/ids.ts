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

/**
 * Random bytes for ids, drawn from the system's generator 4 KiB at a time (as Node's randomUUID
 * does): one call per id was a system call on every dispatch. Each byte is used once.
 */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let poolOffset = 0;

export function newId(kind: IdKind): string {
  if (poolOffset + ID_BODY_LENGTH > pool.length) {
    pool = randomBytes(POOL_BYTES);
    poolOffset = 0;
  }
  let body = '';
  for (let i = 0; i < ID_BODY_LENGTH; i++) body += ID_ALPHABET[pool[poolOffset + i]! & 31];
  poolOffset += ID_BODY_LENGTH;
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
