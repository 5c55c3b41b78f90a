// PostgreSQL stores no NUL character in text or jsonb (it refuses the row). An agent's output may
// hold one, by accident or on purpose: refused, its events would fail their write for ever (and
// with them the supervising loop that enforces its cost cap). svc stores U+FFFD in its place, on
// both databases alike.

/** What a NUL character is stored as. */
export const NUL_REPLACEMENT = '\uFFFD';

/** How deep a stored value may nest: an agent's JSON nested thousands deep would overflow the stack here. */
export const MAX_STORED_DEPTH = 64;
/** What stands for a value nested deeper than that. */
export const TOO_DEEP = '[nested too deeply]';

/**
 * `value` with every NUL in its strings (object keys too) replaced, and anything nested deeper than
 * MAX_STORED_DEPTH replaced by TOO_DEEP; the same value when it holds neither. `replaced`, when
 * given, counts the NUL replacements.
 */
export function withoutNul(value: unknown, replaced?: { count: number }, depth = 0): unknown {
  if (typeof value === 'string') {
    if (!value.includes('\u0000')) return value;
    if (replaced) replaced.count += value.split('\u0000').length - 1;
    return value.replaceAll('\u0000', NUL_REPLACEMENT);
  }
  const nested = Array.isArray(value) || (value && typeof value === 'object' && !(value instanceof Date));
  if (nested && depth >= MAX_STORED_DEPTH) return TOO_DEEP;
  if (Array.isArray(value)) return value.map((item) => withoutNul(item, replaced, depth + 1));
  if (value && typeof value === 'object' && !(value instanceof Date))
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [
        withoutNul(key, replaced, depth + 1),
        withoutNul(inner, replaced, depth + 1),
      ]),
    );
  return value;
}
