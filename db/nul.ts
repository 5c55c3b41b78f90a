// PostgreSQL stores no NUL character in text or jsonb (it refuses the row). An agent's output may
// hold one, by accident or on purpose: refused, its events would fail their write for ever (and
// with them the supervising loop that enforces its cost cap). svc stores U+FFFD in its place, on
// both databases alike.

/** What a NUL character is stored as. */
export const NUL_REPLACEMENT = '\uFFFD';

/**
 * `value` with every NUL in its strings (object keys too) replaced; the same value when it holds
 * none. `replaced`, when given, counts the replacements.
 */
export function withoutNul(value: unknown, replaced?: { count: number }): unknown {
  if (typeof value === 'string') {
    if (!value.includes('\u0000')) return value;
    if (replaced) replaced.count += value.split('\u0000').length - 1;
    return value.replaceAll('\u0000', NUL_REPLACEMENT);
  }
  if (Array.isArray(value)) return value.map((item) => withoutNul(item, replaced));
  if (value && typeof value === 'object' && !(value instanceof Date))
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [withoutNul(key, replaced), withoutNul(inner, replaced)]),
    );
  return value;
}
