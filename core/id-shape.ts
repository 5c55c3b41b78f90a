// The shape of svc's ids: `<prefix>_` + 12 chars of lowercase Crockford-style base32 (no i, l, o,
// u), as in the reference system: short, URL-safe, unambiguous when read aloud. Pure (no library,
// no I/O): a run token's pattern and the masking of secrets (core/redaction.ts) compose it.
// Making ids is core/ids.ts.

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

/** One kind's ids as a regular expression's source, to compose into longer patterns (a run token's). */
export const idPattern = (kind: IdKind): string => `${ID_PREFIXES[kind]}_[${ID_ALPHABET}]{${ID_BODY_LENGTH}}`;

const ID_PATTERNS = Object.fromEntries(
  Object.keys(ID_PREFIXES).map((kind) => [kind, new RegExp(`^${idPattern(kind as IdKind)}$`)]),
) as Record<IdKind, RegExp>;

/** Whether `value` is an id of this kind: the one check of an id's shape. */
export function isId(kind: IdKind, value: string): boolean {
  return ID_PATTERNS[kind].test(value);
}
