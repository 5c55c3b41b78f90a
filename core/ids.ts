// Making ids: random, or derived from an idempotency key. Sortable by nothing. Their shape (alphabet,
// prefixes, the check) is core/id-shape.ts.
import { createHash, randomBytes } from 'node:crypto';
import { ID_ALPHABET, ID_BODY_LENGTH, ID_PREFIXES, type IdKind } from './id-shape.ts';

export { ID_ALPHABET, ID_BODY_LENGTH, ID_PREFIXES, idPattern, isId, type IdKind } from './id-shape.ts';

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
