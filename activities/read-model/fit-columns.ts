// The last guard of a projection: a string longer than its column is cut to fit (with a mark), so
// a row can always be written on both databases. The API refuses such values (core/field-limits.ts);
// this keeps a projection that slipped past it, or an older run, from failing for ever.
import type { EntityName } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/sql';

const CUT_MARK = '…';

export function fitColumns<T extends Record<string, unknown>>(em: EntityManager, entity: EntityName<any>, row: T): T {
  const meta = em.getMetadata().find(entity);
  if (!meta) return row;
  const fitted: Record<string, unknown> = { ...row };
  for (const property of Object.values(meta.properties)) {
    const value = fitted[property.name];
    const length = property.length;
    if (typeof value === 'string' && typeof length === 'number' && value.length > length) {
      fitted[property.name] = `${value.slice(0, length - CUT_MARK.length)}${CUT_MARK}`;
    }
  }
  return fitted as T;
}
