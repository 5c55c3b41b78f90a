// How a value read raw from svc's SQLite read model becomes a PostgreSQL parameter, chosen from
// the entity property it belongs to: SQLite keeps booleans as 0/1, dates as epoch milliseconds
// (MikroORM's SQLite convention) and JSON as text, and PostgreSQL stores no NUL character at all.
import { JsonType, type EntityProperty } from '@mikro-orm/core';
import { withoutNul } from './nul.ts';

/** The conversion for one column; it throws on a value the column cannot hold. */
export function converterFor(prop: EntityProperty): (value: unknown) => unknown {
  if (prop.customType instanceof JsonType) return toJsonText;
  if (prop.runtimeType === 'Date') return toDate;
  if (prop.runtimeType === 'boolean') return toBoolean;
  return (value) => value;
}

function toDate(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  let date: Date;
  if (typeof value === 'number' || /^-?\d+(\.\d+)?$/.test(String(value))) date = new Date(Number(value));
  // SQLite's own date functions write UTC without a zone.
  else if (/^\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d(\.\d+)?)?$/.test(String(value)))
    date = new Date(`${String(value).replace(' ', 'T')}Z`);
  else date = new Date(String(value));
  if (Number.isNaN(date.getTime())) throw new Error(`not a date: ${JSON.stringify(value)}`);
  return date;
}

function toBoolean(value: unknown): boolean | null {
  if (value === null || value === undefined) return null;
  if (value === 1 || value === '1' || value === true || value === 'true') return true;
  if (value === 0 || value === '0' || value === false || value === 'false') return false;
  throw new Error(`not a boolean: ${JSON.stringify(value)}`);
}

/** JSON text for a jsonb parameter. SQLite's numeric affinity may have turned `123` into a number. */
function toJsonText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  const text = typeof value === 'string' ? value : String(value);
  JSON.parse(text); // invalid JSON fails here, with the row named, rather than deep in PostgreSQL
  return text;
}

/** PostgreSQL stores no NUL character in text or jsonb: each becomes U+FFFD (db/nul.ts), and is counted. */
export function withNulCheck(convert: (value: unknown) => unknown, nul: { replaced: number }) {
  const counted = { count: 0 };
  const scrub = (value: unknown) => {
    const clean = withoutNul(value, counted);
    nul.replaced += counted.count;
    counted.count = 0;
    return clean;
  };
  return (value: unknown) => {
    const converted = convert(value);
    if (typeof converted !== 'string') return converted;
    if (converted.includes('\u0000')) return scrub(converted);
    // A JSON escape of NUL: only parsing tells `\u0000` from an escaped backslash before "u0000".
    if (convert === toJsonText && converted.includes('\\u0000')) return JSON.stringify(scrub(JSON.parse(converted)));
    return converted;
  };
}
